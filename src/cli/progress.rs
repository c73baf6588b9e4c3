//! The terminal's progress sink: a bar on stderr when it is a terminal, plain lines otherwise, so
//! a long run never looks hung and stdout keeps only results. Test and info lines go to stdout,
//! unless a command prints a document there (`--format json`), when they go to stderr.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Instant;
use tilepipe::progress::Sink;

pub struct Terminal {
    bar: Mutex<Option<ProgressBar>>,
    quiet: bool,
    lines_on_stdout: bool,
    start: Instant,
}

impl Terminal {
    pub fn new(quiet: bool, lines_on_stdout: bool) -> Terminal {
        Terminal {
            bar: Mutex::new(None),
            quiet,
            lines_on_stdout,
            start: Instant::now(),
        }
    }

    fn line(&self, text: &str) {
        if self.lines_on_stdout {
            println!("{text}");
        } else {
            eprintln!("{text}");
        }
    }

    fn terminal() -> bool {
        std::io::stderr().is_terminal()
    }
}

impl Sink for Terminal {
    fn stage(&self, name: &str, total: u64) {
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

    fn step(&self, msg: &str) {
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

    fn note(&self, msg: &str) {
        if self.quiet {
            return;
        }
        match self.bar.lock().expect("progress lock").as_ref() {
            Some(b) => b.println(msg),
            None => eprintln!("{msg}"),
        }
    }

    fn done(&self) {
        if let Some(b) = self.bar.lock().expect("progress lock").take() {
            b.finish_and_clear();
        }
    }

    fn test(&self, name: &str, passed: bool, detail: &str) {
        let sep = if detail.is_empty() { "" } else { ": " };
        self.line(&format!(
            "{} {name}{sep}{detail}",
            if passed { "ok  " } else { "FAIL" }
        ));
    }

    fn info(&self, msg: &str) {
        self.line(msg);
    }
}
