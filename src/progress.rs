//! Progress on stderr: a bar on a terminal, plain lines otherwise, so a long run never looks hung
//! and stdout keeps only results.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Instant;

pub struct Progress {
    bar: Mutex<Option<ProgressBar>>,
    quiet: bool,
    start: Instant,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            bar: Mutex::new(None),
            quiet,
            start: Instant::now(),
        }
    }

    fn terminal() -> bool {
        std::io::stderr().is_terminal()
    }

    /// Starts a stage of `total` steps.
    pub fn stage(&self, name: &str, total: u64) {
        if self.quiet {
            return;
        }
        let mut bar = self.bar.lock().expect("progress lock");
        if let Some(b) = bar.take() {
            b.finish_and_clear();
        }
        if Self::terminal() {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix:>10} [{bar:30}] {pos}/{len} {elapsed_precise} eta {eta} {msg}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b.set_prefix(name.to_string());
            *bar = Some(b);
        } else {
            eprintln!(
                "[{:7.1}s] {name}: {total} steps",
                self.start.elapsed().as_secs_f64()
            );
        }
    }

    /// One step done.
    pub fn step(&self, msg: &str) {
        if self.quiet {
            return;
        }
        match self.bar.lock().expect("progress lock").as_ref() {
            Some(b) => {
                b.set_message(msg.to_string());
                b.inc(1);
            }
            None => eprintln!("[{:7.1}s]   {msg}", self.start.elapsed().as_secs_f64()),
        }
    }

    /// A line that stays (warnings, stage results).
    pub fn note(&self, msg: &str) {
        if self.quiet {
            return;
        }
        match self.bar.lock().expect("progress lock").as_ref() {
            Some(b) => b.println(msg),
            None => eprintln!("{msg}"),
        }
    }

    pub fn done(&self) {
        if let Some(b) = self.bar.lock().expect("progress lock").take() {
            b.finish_and_clear();
        }
    }
}
