//! `tilepipe lab`: the queue lab (host only).

use super::print;
use clap::{Args, Subcommand};
use std::io::IsTerminal;
use std::process::ExitCode;
use tilepipe::queue_lab;

#[derive(Args)]
pub struct LabArgs {
    #[command(subcommand)]
    lab: Lab,
}

#[derive(Subcommand)]
enum Lab {
    /// The fluid queue: Reset, rates, predict, Step (dt 0.5 s).
    Queue(QueueArgs),
}

#[derive(Args)]
struct QueueArgs {
    /// Commands instead of the interactive UI: "reset; arrival 3; service 2; step; step; show".
    #[arg(long)]
    script: Option<String>,
    /// Read commands from standard input.
    #[arg(long, conflicts_with = "script")]
    stdin: bool,
    /// Seconds per Step (0.001 to 60).
    #[arg(long, default_value_t = 0.5, value_parser = number)]
    dt: f64,
    /// Slots of the bounded pipeline shown beside the queue (a whole number, 1 to 1024).
    #[arg(long, default_value_t = 4.0, value_parser = number)]
    slots: f64,
}

/// A number for clap; the lab then says which it takes.
fn number(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("'{s}' is not a number (allowed: a decimal number such as 0.5)"))
}

pub fn cmd_lab(a: LabArgs) -> anyhow::Result<ExitCode> {
    let Lab::Queue(a) = a.lab;
    let mut q = queue_lab::Queue::new(a.dt, a.slots)?;
    if a.script.is_none()
        && !a.stdin
        && !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal())
    {
        return Err(tilepipe::Error::Lab(
            "the interactive lab needs a terminal on stdin and stdout, and there is none; \
             allowed without one: --script \"reset; arrival 3; service 2; step 2\" or --stdin"
                .into(),
        )
        .into());
    }
    let script = match (a.script, a.stdin) {
        (Some(s), _) => Some(s),
        (None, true) => Some(std::io::read_to_string(std::io::stdin())?),
        (None, false) => None,
    };
    match script {
        Some(s) => {
            for line in queue_lab::script::run(&mut q, &s)? {
                print::line(&line);
            }
        }
        None => queue_lab::tui::run(q)?,
    }
    Ok(ExitCode::SUCCESS)
}
