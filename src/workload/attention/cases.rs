//! The problems attention is validated on: before a run's timing, tails under both masks and one
//! key tile; in the suite, every edge of the walk (tails, one tile, fewer tiles than stages,
//! whole tiles, blocks of unequal length under the causal mask); and where stress runs and
//! controls go.

use super::{AttnVariant, Problem};
use crate::Result;
use crate::dtype::DType;
use crate::pipeline::Instrument;
use crate::workload::{Case, Grid};

/// `(batch, heads, seqlen, causal)` at `p`'s head dimension and precision.
fn like(p: &Problem, (b, h, s, causal): (usize, usize, usize, bool)) -> Result<Problem> {
    Problem::new(b, h, s, p.head_dim, causal, p.dtype)
}

fn case(p: &Problem, what: &str, shape: (usize, usize, usize, bool)) -> Result<Case<Problem>> {
    let q = like(p, shape)?;
    Ok(Case::new(
        &format!("{} ({what})", q.label()),
        q,
        Grid::Persistent,
    ))
}

/// Every variant of a run is validated on these before the user's problem (last).
pub fn run_cases(p: &Problem) -> Result<Vec<Case<Problem>>> {
    Ok(vec![
        case(p, "tails in queries and keys", (1, 3, 200, false))?,
        case(p, "tails, causal", (1, 3, 200, true))?,
        case(p, "one key tile", (1, 2, 40, p.causal))?,
        Case::new("as given", *p, Grid::Persistent),
    ])
}

/// The suite's problems: (batch, heads, seqlen, causal) and what each is for.
const SUITE: [(&str, usize, usize, usize, bool); 8] = [
    ("tails in queries and keys", 1, 3, 200, false),
    ("tails, causal", 1, 3, 200, true),
    ("one key tile", 2, 2, 40, false),
    ("fewer key tiles than stages", 1, 2, 70, false),
    ("whole tiles, causal", 1, 4, 256, true),
    ("one query row", 1, 2, 1, true),
    ("blocks of unequal length", 2, 8, 1100, true),
    ("many blocks", 1, 32, 512, false),
];

pub fn suite_cases(group: &Problem) -> Result<Vec<Case<Problem>>> {
    SUITE
        .iter()
        .map(|&(what, b, h, s, causal)| case(group, what, (b, h, s, causal)))
        .collect()
}

/// Stress runs go to the causal problem of unequal blocks: each block walks its own count of
/// key tiles; a persistent variant's on 7 blocks, so that each walks 20 or 22 query tiles of
/// unequal length, its ring running on from one into the next.
pub fn stress_cases(group: &Problem, v: &AttnVariant) -> Result<Vec<Case<Problem>>> {
    let &(what, b, h, s, causal) = &SUITE[6];
    let c = case(group, what, (b, h, s, causal))?;
    Ok(vec![match v.shape.persistent {
        true => Case::new(
            &format!("{} (query tiles walked by 7 blocks)", c.problem.label()),
            c.problem,
            Grid::Fixed(PERSISTENT_BLOCKS),
        ),
        false => c,
    }])
}
const PERSISTENT_BLOCKS: u32 = 7;

/// Where the controls run: causal (the shifted mask needs one), eight key tiles a head for most
/// blocks (a rescale skipped shows once a row's maximum moves), and 256 blocks, so copies contend
/// and land late. Clean builds: a control needs no sleeps to show.
pub fn control_cases(group: &Problem) -> Result<(Vec<Case<Problem>>, Instrument)> {
    Ok((
        vec![case(
            group,
            "a causal walk of eight key tiles",
            (4, 8, 512, true),
        )?],
        Instrument::CLEAN,
    ))
}

/// The suite's groups: every precision asked for (f32 refused with the reason) at every head
/// dimension (`axis`: 64, 128, comma-separated).
pub fn suite_groups(dtypes: &[DType], axis: Option<&str>) -> Result<Vec<(String, Problem)>> {
    let mut dims = Vec::new();
    for d in axis.unwrap_or("64,128").split(',').map(str::trim) {
        match d.parse::<usize>() {
            Ok(v) if super::problem::HEAD_DIMS.contains(&v) => dims.push(v),
            _ => {
                return Err(crate::Error::InvalidArgument(format!(
                    "--head-dims: '{d}' is not a head dimension the kernels are built for (allowed: 64, 128)"
                )));
            }
        }
    }
    let mut groups = Vec::new();
    for &dtype in dtypes {
        for &d in &dims {
            groups.push((
                format!("{dtype} d{d}"),
                Problem::new(1, 1, 64, d, false, dtype)?,
            ));
        }
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_cover_each_precision_and_head_dim_and_refuse_what_is_not_built() {
        let g = suite_groups(&[DType::F16, DType::Bf16], None).unwrap();
        let names: Vec<&str> = g.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["f16 d64", "f16 d128", "bf16 d64", "bf16 d128"]);
        let e = suite_groups(&[DType::Bf16], Some("64,96")).unwrap_err();
        assert!(e.to_string().contains("'96'") && e.to_string().contains("allowed: 64, 128"));
        let e = suite_groups(&[DType::F32], None).unwrap_err();
        assert!(e.to_string().contains("allowed: f16, bf16"), "{e}");
    }

    #[test]
    fn the_suite_walks_every_edge_under_both_masks() {
        let (_, group) = &suite_groups(&[DType::Bf16], Some("128")).unwrap()[0];
        let cases = suite_cases(group).unwrap();
        assert!(cases.iter().any(|c| c.problem.causal) && cases.iter().any(|c| !c.problem.causal));
        assert!(cases.iter().all(|c| c.problem.head_dim == 128));
        assert!(cases.iter().any(|c| c.problem.seqlen % 64 != 0));
        assert!(cases.iter().any(|c| c.problem.seqlen < 64));
        let (ctl, _) = control_cases(group).unwrap();
        assert!(ctl[0].problem.causal && ctl[0].problem.seqlen >= 8 * 64);
    }
}
