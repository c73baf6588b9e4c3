//! The command line: the top-level parser, one module per command (its arguments and its
//! `cmd_*`), the argument groups they share (`args`), all terminal printing (`print`) and the
//! terminal's progress sink (`progress`).

pub mod args;
pub mod check;
pub mod compare;
pub mod inspect;
pub mod lab;
pub mod merge;
pub mod model;
pub mod print;
pub mod probe;
pub mod progress;
pub mod report;
pub mod run;
pub mod sass;
pub mod suite_end;
pub mod sweep;
pub mod timeline;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "tilepipe",
    version = tilepipe::VERSION,
    about = "Build, validate and measure asynchronous-copy tile pipelines on NVIDIA GPUs"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parses the process's arguments. A negative number given to any option is taken as its
    /// value, so that the option's own parser refuses it and says what is allowed (clap alone
    /// reads `--warmup -1` as an unknown flag `-1`).
    pub fn from_args() -> Cli {
        use clap::{CommandFactory, FromArgMatches};
        let matches = negative_numbers_are_values(Cli::command()).get_matches();
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
}

fn negative_numbers_are_values(c: clap::Command) -> clap::Command {
    c.mut_args(|a| match a.get_action().takes_values() {
        true => a.allow_negative_numbers(true),
        false => a,
    })
    .mut_subcommands(negative_numbers_are_values)
}

#[derive(Subcommand)]
pub enum Command {
    /// The main job: build, validate, record evidence, time, report.
    Run(run::RunArgs),
    /// The GPU suite: every variant x precision x shape, SASS attestation, controls.
    Check(check::CheckArgs),
    /// Census and annotated SASS of one variant (works without a GPU with --arch).
    Sass(sass::SassArgs),
    /// Your own kernel (.cu, cubin, fatbinary or executable): mechanism attestation, protocol
    /// checks, resources; exit 1 on a contradicted claim or a hazard (host only).
    Inspect(inspect::InspectArgs),
    /// One launch of one variant on fresh inputs, checked against the reference (after its
    /// correct twin's launch, where it has one, which it must match bit for bit): for
    /// compute-sanitizer, Nsight Compute and other tools to observe.
    Probe(probe::ProbeArgs),
    /// Instrumented builds: copy/compute timeline per sampled block, overlap figure, Chrome trace.
    Timeline(timeline::TimelineArgs),
    /// Named axes (tiles, stages, mechanism, tile_rows, dtype) expanded to a sweep; JSONL + plots.
    Sweep(sweep::SweepArgs),
    /// The pipeline model against a sweep's measurements (host only).
    Model(model::ModelArgs),
    /// Tables and report.html from a results.json (host only).
    Report(report::ReportArgs),
    /// Two results.json side by side: per-variant ratio and a noise-aware verdict; exit 1 on a
    /// regression (host only).
    Compare(compare::CompareArgs),
    /// Join the sweep.jsonl files of a sweep's shards and draw the plots and model from the whole.
    Merge(merge::MergeArgs),
    /// The queue lab: an analogy for outstanding tiles (host only).
    Lab(lab::LabArgs),
}

impl Command {
    /// Whether the command stops at its next kernel on a first Ctrl-C, keeping what it measured.
    /// The others (host only) write each file whole, beside it and then renamed over it, so
    /// ending them at once leaves every existing file as it was.
    pub fn stops_between_kernels(&self) -> bool {
        matches!(
            self,
            Command::Run(_)
                | Command::Check(_)
                | Command::Probe(_)
                | Command::Timeline(_)
                | Command::Sweep(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn only_the_gpu_commands_wait_for_the_next_kernel_on_ctrl_c() {
        let parse = |args: &[&str]| Cli::try_parse_from(args).unwrap().command;
        assert!(parse(&["tilepipe", "run"]).stops_between_kernels());
        assert!(parse(&["tilepipe", "check"]).stops_between_kernels());
        assert!(parse(&["tilepipe", "sweep", "--out", "d"]).stops_between_kernels());
        for host in [
            &["tilepipe", "merge", "a.jsonl", "--out", "d"][..],
            &["tilepipe", "compare", "a.json", "b.json"],
            &["tilepipe", "report", "a.json"],
        ] {
            assert!(!parse(host).stops_between_kernels(), "{host:?}");
        }
    }
}
