//! Progress and result lines, reported through one handle. The library never prints: it calls a
//! `Progress`, whose `Sink` decides what happens (the command line draws a bar on stderr and prints
//! test lines on stdout; tests record; `Progress::silent()` drops everything).

use std::sync::{Arc, Mutex};

/// Where progress goes. Implementations must be usable from several threads.
pub trait Sink: Send + Sync {
    /// Starts a stage of `total` steps.
    fn stage(&self, name: &str, total: u64);
    /// One step done.
    fn step(&self, msg: &str);
    /// A line that stays (warnings, stage results).
    fn note(&self, msg: &str);
    /// The current stage is over.
    fn done(&self);
    /// One test of the suite passed or failed, with its detail (possibly empty).
    fn test(&self, name: &str, passed: bool, detail: &str);
    /// An informational result line for the reader (not a test, not progress).
    fn info(&self, msg: &str);
}

/// The handle the library reports through; cheap to clone.
#[derive(Clone)]
pub struct Progress {
    sink: Arc<dyn Sink>,
}

impl Progress {
    pub fn new(sink: Arc<dyn Sink>) -> Progress {
        Progress { sink }
    }

    /// Reports nothing.
    pub fn silent() -> Progress {
        Progress::new(Arc::new(Silent))
    }

    /// Starts a stage of `total` steps.
    pub fn stage(&self, name: &str, total: u64) {
        self.sink.stage(name, total);
    }

    /// One step done.
    pub fn step(&self, msg: &str) {
        self.sink.step(msg);
    }

    /// A line that stays (warnings, stage results).
    pub fn note(&self, msg: &str) {
        self.sink.note(msg);
    }

    pub fn done(&self) {
        self.sink.done();
    }

    /// One test's outcome.
    pub fn test(&self, name: &str, passed: bool, detail: &str) {
        self.sink.test(name, passed, detail);
    }

    /// An informational result line.
    pub fn info(&self, msg: &str) {
        self.sink.info(msg);
    }
}

/// Drops everything.
pub struct Silent;

impl Sink for Silent {
    fn stage(&self, _: &str, _: u64) {}
    fn step(&self, _: &str) {}
    fn note(&self, _: &str) {}
    fn done(&self) {}
    fn test(&self, _: &str, _: bool, _: &str) {}
    fn info(&self, _: &str) {}
}

/// What a `Recording` sink saw, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Stage {
        name: String,
        total: u64,
    },
    Step(String),
    Note(String),
    Done,
    Test {
        name: String,
        passed: bool,
        detail: String,
    },
    Info(String),
}

/// Keeps every event, for tests.
#[derive(Default)]
pub struct Recording {
    events: Mutex<Vec<Event>>,
}

impl Recording {
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().expect("recording lock").clone()
    }

    fn push(&self, e: Event) {
        self.events.lock().expect("recording lock").push(e);
    }
}

impl Sink for Recording {
    fn stage(&self, name: &str, total: u64) {
        self.push(Event::Stage {
            name: name.into(),
            total,
        });
    }
    fn step(&self, msg: &str) {
        self.push(Event::Step(msg.into()));
    }
    fn note(&self, msg: &str) {
        self.push(Event::Note(msg.into()));
    }
    fn done(&self) {
        self.push(Event::Done);
    }
    fn test(&self, name: &str, passed: bool, detail: &str) {
        self.push(Event::Test {
            name: name.into(),
            passed,
            detail: detail.into(),
        });
    }
    fn info(&self, msg: &str) {
        self.push(Event::Info(msg.into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handle_forwards_to_its_sink() {
        let rec = Arc::new(Recording::default());
        let p = Progress::new(rec.clone());
        p.stage("load", 2);
        p.step("a");
        p.note("kept");
        p.test("t", false, "why");
        p.info("i");
        p.done();
        assert_eq!(
            rec.events(),
            vec![
                Event::Stage {
                    name: "load".into(),
                    total: 2
                },
                Event::Step("a".into()),
                Event::Note("kept".into()),
                Event::Test {
                    name: "t".into(),
                    passed: false,
                    detail: "why".into()
                },
                Event::Info("i".into()),
                Event::Done,
            ]
        );
        Progress::silent().note("nothing");
    }
}
