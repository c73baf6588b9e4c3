//! What the probe processes of a control that may fault said about its runs: each run line says
//! passed, FAILED or FAULTED; a process killed for its silence hung on its next run; a process
//! that stopped with no verdict on its next run (its arguments, a build) caught nothing, and says
//! why.

/// Where a control's runs stand.
#[derive(Debug, Default, PartialEq)]
pub struct Tally {
    /// Runs with a verdict so far.
    pub done: usize,
    pub caught: usize,
    /// The first catch, or why the runs stopped without one.
    pub first: String,
    /// No further process is started.
    pub stopped: bool,
}

/// One probe process's outcome.
pub struct Process<'a> {
    pub stdout: &'a str,
    pub stderr: &'a str,
    pub success: bool,
    /// Killed after printing nothing for this long.
    pub silent: Option<std::time::Duration>,
}

impl Tally {
    /// Adds what one process said; `runs` is how many the control asked for in all.
    pub fn add(&mut self, p: &Process, runs: usize) {
        let lines: Vec<&str> = p.stdout.lines().filter(|l| l.starts_with("run ")).collect();
        for l in &lines {
            if !l.contains(": passed") {
                self.caught += 1;
                if self.first.is_empty() {
                    self.first = l.to_string();
                }
            }
        }
        self.done += lines.len();
        if self.done >= runs {
            self.stopped = true;
            return;
        }
        if let Some(silent) = p.silent {
            // its next run hung past its bounded waits: that run caught it, a new process takes
            // the rest
            if self.first.is_empty() {
                self.first = format!(
                    "run {}: the probe process was killed: it printed nothing for {} s (the kernel hung)",
                    self.done,
                    silent.as_secs()
                );
            }
            self.caught += 1;
            self.done += 1;
            self.stopped = self.done >= runs;
            return;
        }
        let faulted = lines.last().is_some_and(|l| l.contains(": FAULTED"));
        if (lines.is_empty() || !p.success) && !faulted {
            self.first = format!(
                "run {}: the probe stopped without a verdict: {}",
                self.done,
                p.stderr.trim()
            );
            self.stopped = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(stdout: &str, success: bool) -> Process<'_> {
        Process {
            stdout,
            stderr: "tilepipe: error: no CUDA driver",
            success,
            silent: None,
        }
    }

    #[test]
    fn failed_and_faulted_runs_are_caught_and_a_fault_goes_on_in_a_new_process() {
        let mut t = Tally::default();
        let out = "run 0 ctl: FAILED: 12 NaN\nrun 1 ctl: passed: ok\nrun 2 ctl: FAULTED: illegal address\n";
        t.add(&process(out, false), 5);
        assert_eq!((t.done, t.caught, t.stopped), (3, 2, false));
        assert_eq!(t.first, "run 0 ctl: FAILED: 12 NaN");
        t.add(
            &process("run 3 ctl: FAILED: x\nrun 4 ctl: FAILED: y\n", false),
            5,
        );
        assert_eq!((t.done, t.caught, t.stopped), (5, 4, true));
    }

    /// A probe that cannot run (no GPU, a bad argument, a failed build) must not make a control
    /// look caught: it stops the runs, catches nothing, and says why.
    #[test]
    fn a_process_without_a_verdict_catches_nothing() {
        for (out, ok) in [("", false), ("", true), ("run 0 ctl: FAILED: x\n", false)] {
            let mut t = Tally::default();
            t.add(&process(out, ok), 20);
            assert!(t.stopped, "{out:?}");
            assert_eq!(t.caught, usize::from(!out.is_empty()), "{out:?}");
            assert!(
                t.first
                    .contains("without a verdict: tilepipe: error: no CUDA driver"),
                "{}",
                t.first
            );
        }
    }

    /// A hung run is one run caught; the runs after it are run by the next process, never
    /// counted without running.
    #[test]
    fn a_killed_process_hung_on_one_run_and_the_next_takes_the_rest() {
        let mut t = Tally::default();
        let p = Process {
            silent: Some(std::time::Duration::from_secs(30)),
            ..process("built ctl: 20 runs to go\nrun 0 ctl: passed: ok\n", false)
        };
        t.add(&p, 20);
        assert_eq!((t.done, t.caught, t.stopped), (2, 1, false));
        assert!(
            t.first
                .contains("run 1: the probe process was killed: it printed nothing for 30 s"),
            "{}",
            t.first
        );
        let rest: String = (2..20)
            .map(|k| format!("run {k} ctl: FAILED: x\n"))
            .collect();
        t.add(&process(&rest, false), 20);
        assert_eq!((t.done, t.caught, t.stopped), (20, 19, true));
        // the last run hung: done, nothing more is started
        let mut t = Tally::default();
        let hung = Process {
            silent: Some(std::time::Duration::from_secs(30)),
            ..process("", false)
        };
        t.add(&hung, 1);
        assert_eq!((t.done, t.caught, t.stopped), (1, 1, true));
    }
}
