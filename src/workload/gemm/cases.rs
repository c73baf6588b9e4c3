//! The problems a GEMM is validated on: before a run's timing, tails in M, N and K and K below one
//! slice; in the suite, every edge of the tile schedule; and where stress runs and controls go.

use super::tile::GemmVariant;
use super::{Layout, Problem};
use crate::Result;
use crate::dtype::DType;
use crate::pipeline::{Control, Instrument};
use crate::workload::{Case, Grid};

/// `m x n x k` in `p`'s layout and precision.
fn like(p: &Problem, (m, n, k): (usize, usize, usize)) -> Result<Problem> {
    Problem::new(m, n, k, p.layout, p.dtype)
}

/// A case named for its shape and what it is for.
fn case(p: &Problem, what: &str, mnk: (usize, usize, usize)) -> Result<Case<Problem>> {
    let (m, n, k) = mnk;
    Ok(Case::new(
        &format!("{m}x{n}x{k} ({what})"),
        like(p, mnk)?,
        Grid::Persistent,
    ))
}

/// Every variant of a run is validated on these before the user's problem (last): tails in M, N
/// and K (N and K multiples of 8 elements, so rows take the run's widest copies), and K below one
/// slice.
pub fn run_cases(p: &Problem) -> Result<Vec<Case<Problem>>> {
    Ok(vec![
        case(p, "tails in M, N and K", (257, 392, 1000))?,
        case(p, "K below one slice", (96, 136, 8))?,
        Case::new("as given", *p, Grid::Persistent),
    ])
}

/// The suite's problems (M, N, K) and what each is for.
const SUITE: [(&str, usize, usize, usize); 8] = [
    ("tails in M, N and K", 257, 392, 1000),
    ("K below one slice", 96, 136, 8),
    ("fewer slices than stages", 200, 136, 40),
    ("one K slice", 130, 264, 16),
    ("whole tiles", 512, 512, 512),
    ("odd K", 67, 40, 1001),
    ("large, sampled", 1536, 1024, 2048),
    // 256 to 512 tiles: persistent blocks (one per SM) walk two to four, the last round short
    (MANY_TILES, 2048, 4096, 128),
];
const MANY_TILES: &str = "more tiles than blocks at once";

pub fn suite_cases(group: &Problem) -> Result<Vec<Case<Problem>>> {
    SUITE
        .iter()
        .map(|&(what, m, n, k)| case(group, what, (m, n, k)))
        .collect()
}

/// A variant's stress runs go to the first tail problem; a persistent variant's to the problem
/// where its blocks walk tiles.
pub fn stress_cases(group: &Problem, v: &GemmVariant) -> Result<Vec<Case<Problem>>> {
    let &(what, m, n, k) = match v.shape.persistent {
        true => SUITE
            .iter()
            .find(|c| c.0 == MANY_TILES)
            .expect("a case of many tiles"),
        false => &SUITE[0],
    };
    Ok(vec![case(group, what, (m, n, k))?])
}

/// Where the controls run: a thousand blocks of 8 to 16 slices each, so that the first wave's
/// copies contend for memory and land late, as a broken protocol needs to show.
const CONTROL_CASE: (usize, usize, usize) = (4096, 4096, 256);
/// Where the draining control runs: one K slice, so the slice its too-short wait lets through is
/// read right after it was issued (with more slices it is the last one, issued stages ago, and a
/// late copy is luck).
const DRAIN_CASE: (usize, usize, usize) = (4096, 4096, 16);

/// A control's problem, and its build: clean (a GEMM control needs no sleeps to show).
pub fn control_cases(group: &Problem, v: &GemmVariant) -> Result<(Vec<Case<Problem>>, Instrument)> {
    let (mnk, what) = match v.control {
        Some(Control::DrainNoCommit) => (DRAIN_CASE, "one K slice"),
        _ => (CONTROL_CASE, "a thousand blocks"),
    };
    Ok((vec![case(group, what, mnk)?], Instrument::CLEAN))
}

/// The suite's groups: every precision in every layout of B (`axis`: kn, nk, comma-separated).
pub fn suite_groups(dtypes: &[DType], axis: Option<&str>) -> Result<Vec<(String, Problem)>> {
    let mut layouts = Vec::new();
    for l in axis.unwrap_or("kn,nk").split(',').map(str::trim) {
        layouts.push(match l {
            "kn" => Layout::Kn,
            "nk" => Layout::Nk,
            _ => {
                return Err(crate::Error::InvalidArgument(format!(
                    "--layouts: '{l}' is not a layout of B (allowed: kn, nk)"
                )));
            }
        });
    }
    let mut groups = Vec::new();
    for &dtype in dtypes {
        for &layout in &layouts {
            groups.push((
                format!("{dtype} {}", layout.name()),
                Problem::new(4096, 4096, 4096, layout, dtype)?,
            ));
        }
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::gemm::catalogue::{catalogue, controls};

    #[test]
    fn the_suite_covers_the_schedules_edges_in_each_group() {
        let g = Problem::new(4096, 4096, 4096, Layout::Nk, DType::Bf16).unwrap();
        let c = suite_cases(&g).unwrap();
        assert_eq!(c.len(), 8);
        assert!(c.iter().all(|c| c.problem.layout == Layout::Nk));
        assert!(c.iter().any(|c| c.problem.k < 32), "K below one slice");
        assert!(c.iter().any(|c| c.problem.k % 2 == 1), "odd K");
        let run = run_cases(&g).unwrap();
        assert_eq!(run.last().unwrap().problem, g, "the user's problem last");
    }

    #[test]
    fn stress_and_controls_go_where_their_hazard_shows() {
        let g = Problem::new(64, 64, 64, Layout::Kn, DType::Bf16).unwrap();
        let all = catalogue(DType::Bf16);
        let persist = all.iter().find(|v| v.shape.persistent).unwrap();
        assert!(
            stress_cases(&g, persist).unwrap()[0]
                .name
                .contains(MANY_TILES)
        );
        assert!(stress_cases(&g, &all[0]).unwrap()[0].name.contains("tails"));
        for c in controls(DType::Bf16) {
            let (cases, instrument) = control_cases(&g, &c).unwrap();
            assert_eq!(instrument, Instrument::CLEAN);
            let k = cases[0].problem.k;
            assert_eq!(
                k == 16,
                c.control == Some(Control::DrainNoCommit),
                "{}",
                c.name
            );
        }
        assert_eq!(suite_groups(&[DType::F32], None).unwrap().len(), 2);
        let e = suite_groups(&[DType::F32], Some("kn,mk")).unwrap_err();
        assert!(e.to_string().contains("'mk'"), "{e}");
    }
}
