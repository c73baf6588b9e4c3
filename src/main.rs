//! tilepipe's command line: parse, dispatch to a command in `cli`. Errors end in one line on
//! stderr and a non-zero exit.

mod cli;

use cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    // A reader that stops early (`tilepipe run | head`) closes stdout and println! panics: leave
    // quietly instead, as other command-line tools do.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map_or("", String::as_str);
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default_hook(info);
    }));
    let cli = Cli::from_args();
    // Ctrl-C: the first asks the GPU commands to stop at the next kernel and keep what they
    // measured (exit 130); a second one, or the first in a host-only command, ends the process at
    // once (exit 130). Without a handler (it could not be installed) Ctrl-C simply ends the process.
    let patient = cli.command.stops_between_kernels();
    let _ = ctrlc::set_handler(move || {
        if tilepipe::interrupt::request() || !patient {
            std::process::exit(130);
        }
    });
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tilepipe: error: {e:#}");
            ExitCode::from(
                if e.downcast_ref::<tilepipe::Error>()
                    .is_some_and(is_input_error)
                {
                    2
                } else {
                    1
                },
            )
        }
    }
}

fn is_input_error(e: &tilepipe::Error) -> bool {
    use tilepipe::Error::*;
    matches!(
        e,
        InvalidShape(_) | InvalidArgument(_) | Unsupported { .. } | TensorMap(_) | Lab(_)
    )
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(a) => cli::run::cmd_run(a),
        Command::Check(a) => cli::check::cmd_check(a),
        Command::Sass(a) => cli::sass::cmd_sass(a),
        Command::Inspect(a) => cli::inspect::cmd_inspect(a),
        Command::Probe(a) => cli::probe::cmd_probe(a),
        Command::Timeline(a) => cli::timeline::cmd_timeline(a),
        Command::Sweep(a) => cli::sweep::cmd_sweep(a),
        Command::Model(a) => cli::model::cmd_model(a),
        Command::Report(a) => cli::report::cmd_report(a),
        Command::Compare(a) => cli::compare::cmd_compare(a),
        Command::Merge(a) => cli::merge::cmd_merge(a),
        Command::Lab(a) => cli::lab::cmd_lab(a),
    }
}
