//! The controls of `check --workload gemm`: each run many times on fresh inputs, compared bit for
//! bit with its correct twin (itself checked against the sampled reference first); every run must
//! catch it. A control whose broken protocol can fault the GPU context (the mbarrier ring's) runs
//! in a new process of this binary, and again in another after each fault, until all its runs are
//! done: the fault of a run is how that run caught it, and the suite goes on.

use super::kernel::{Buffers, GemmKernel};
use super::{failures, judge};
use crate::check::suite::{ControlRuns, SuiteReport};
use crate::harness::Engine;
use crate::workload::gemm::Problem;
use crate::workload::gemm::data::Inputs;
use crate::workload::gemm::reference;
use crate::{Error, Result};

/// Where a control runs and what it is compared with.
pub struct ControlJob<'a> {
    pub control: &'a GemmKernel,
    pub twin: &'a GemmKernel,
    pub problem: Problem,
    pub runs: usize,
    pub seed: u64,
}

/// Runs `j` in this process, up to its last run or a fault of the context (counted as a catch,
/// then returned as the error that ends this process's use of the GPU). Any other stop is said in
/// `stopped`.
pub fn runs_here(e: &Engine, j: &ControlJob) -> (ControlRuns, Option<Error>) {
    let mut t = ControlRuns::none(j.control.name());
    let p = &j.problem;
    let elements = reference::checked_elements(p, j.seed);
    let stop = |mut t: ControlRuns, err: Error| {
        t.stopped = Some(err.to_string());
        (t, Some(err))
    };
    for r in 0..j.runs {
        if let Err(err) = crate::interrupt::check() {
            return stop(t, err);
        }
        let x = Inputs::new(*p, j.seed ^ 0xC0_417 ^ (r as u64) << 20);
        let mut d = match Buffers::upload(&e.gpu, &x) {
            Ok(d) => d,
            Err(err) => return stop(t, err),
        };
        // the twin must be right, or a difference would prove nothing
        let base = match j.twin.run_checked(e, &mut d, r as u32) {
            Ok(c) => c,
            Err(err) => return stop(t, err),
        };
        let v = reference::against_reference(&base, &x, &elements);
        if !v.passed() {
            let why = format!(
                "its correct twin {} failed validation: {}",
                j.twin.name(),
                v.summary()
            );
            return stop(t, Error::InvalidArgument(why));
        }
        let outcome = judge(
            e,
            j.control,
            &mut d,
            &x,
            &elements,
            (None, Some(&base)),
            r as u32 + 1,
        );
        let why = match outcome {
            Ok((_, v)) => failures(&v),
            Err(err) if e.healthy() => Some(err.to_string()),
            Err(err) => {
                t.runs += 1;
                t.caught += 1;
                if t.first.is_empty() {
                    t.first = format!("faulted the GPU context: {err}");
                }
                return (t, Some(err));
            }
        };
        t.runs += 1;
        if let Some(w) = why {
            t.caught += 1;
            if t.first.is_empty() {
                t.first = w;
            }
        }
    }
    (t, None)
}

/// Runs the control named in `j` in new processes of this binary (`command` is this process's
/// argv) until its runs are done, a new process after each fault. Returns the runs added up.
pub fn runs_in_children(
    command: &[String],
    (dtype, layout): (&str, &str),
    j: &ControlJob,
) -> Result<ControlRuns> {
    let name = j.control.name();
    let mut total = ControlRuns::none(name);
    let argv = child_argv(command);
    while total.runs < j.runs {
        crate::interrupt::check()?;
        let seed = j.seed ^ total.runs as u64;
        let extra = child_args((dtype, layout), name, j.runs - total.runs, seed);
        let child: SuiteReport = crate::child::continue_in(&argv, &extra)?;
        let Some(t) = child.control_runs.into_iter().find(|t| t.name == name) else {
            return Err(Error::InChild {
                detail: format!(
                    "it ran no run of {name}: {}",
                    child.stopped.unwrap_or_default()
                ),
            });
        };
        if let Some(why) = t.stopped.or_else(|| (t.runs == 0).then(|| "no run".into())) {
            return Err(Error::InChild {
                detail: format!("{name} stopped after {} runs: {why}", total.runs + t.runs),
            });
        }
        total.runs += t.runs;
        total.caught += t.caught;
        if total.first.is_empty() {
            total.first = t.first;
        }
    }
    Ok(total)
}

/// This process's argv without what a control's own process is given anew.
fn child_argv(command: &[String]) -> Vec<String> {
    let mut argv = vec![command.first().cloned().unwrap_or_default()];
    let picked = ["--dtypes", "--layouts", "--variants", "--runs", "--seed"];
    argv.extend(crate::child::without(command, &picked));
    argv
}

/// What a control's own process is given: its group, the control alone, the runs left and a seed
/// that differs from the earlier processes'.
fn child_args((dtype, layout): (&str, &str), name: &str, runs: usize, seed: u64) -> Vec<String> {
    [
        "--dtypes",
        dtype,
        "--layouts",
        layout,
        "--variants",
        name,
        "--runs",
        &runs.to_string(),
        "--seed",
        &seed.to_string(),
        "--only-controls",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_process_gets_one_control_and_the_runs_left() {
        let argv: Vec<String> =
            "tilepipe check --workload gemm --dtypes bf16,f16 --runs 20 --seed 7 --out d"
                .split(' ')
                .map(String::from)
                .collect();
        let mut all = child_argv(&argv);
        all.extend(child_args(
            ("bf16", "nk"),
            "ctl-tma-wrong-parity",
            13,
            7 ^ 7,
        ));
        let line = all.join(" ");
        assert_eq!(
            line,
            "tilepipe check --workload gemm --out d --dtypes bf16 --layouts nk --variants ctl-tma-wrong-parity --runs 13 --seed 0 --only-controls"
        );
        let parsed = crate::child::args(&all, &[], std::path::Path::new("/tmp/r.json"));
        assert!(parsed.ends_with(&[
            "--child-results".into(),
            "/tmp/r.json".into(),
            "--quiet".into()
        ]));
    }
}
