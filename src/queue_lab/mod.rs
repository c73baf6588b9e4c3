//! The queue lab: a fluid queue as an analogy for outstanding tiles, and nothing more. Its backlog
//! starts at 4 on Reset and changes continuously at fixed rates; it has no copy instructions,
//! buffer slots, barriers, occupancy or timeline, so it cannot validate a CUDA pipeline. Beside it
//! runs what a bounded S-slot pipeline would do at the same rates.

pub mod script;
pub mod tui;

use crate::{Error, Result};
use std::collections::VecDeque;

/// Shown once by the scripted mode and always on the terminal UI.
pub const DISCLAIMER: &str = "ANALOGY ONLY: no copy instructions, buffer slots, barriers, occupancy or timeline; \
                              it cannot validate a CUDA pipeline.";

pub const START_BACKLOG: f64 = 4.0;
pub const DEFAULT_DT: f64 = 0.5;
/// Bounds on what the lab takes, so that every number it shows stays readable: tiles per second,
/// seconds per step, slots, and a predicted backlog in tiles.
pub const MAX_RATE: f64 = 1e6;
pub const MIN_DT: f64 = 1e-3;
pub const MAX_DT: f64 = 60.0;
pub const MAX_SLOTS: f64 = 1024.0;
pub const MAX_BACKLOG: f64 = 1e15;
/// The most points of history kept (the oldest go first): a long session stays in bounded memory.
pub const HISTORY: usize = 10_000;

#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub at: f64,
    pub backlog: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Queue {
    pub t: f64,
    pub backlog: f64,
    pub arrival: f64,
    pub service: f64,
    pub dt: f64,
    /// Slots of the bounded pipeline shown beside the fluid queue.
    pub slots: f64,
    /// Tiles in flight in the bounded pipeline (never above `slots`).
    pub bounded: f64,
    /// Work the bounded pipeline's producer could not issue because every slot was full.
    pub stalled: f64,
    /// (t, backlog, bounded) after each step, the last `HISTORY` of them.
    pub history: VecDeque<(f64, f64, f64)>,
    pub prediction: Option<Prediction>,
    /// The last checked prediction: (predicted, actual).
    pub verdict: Option<(f64, f64)>,
}

impl Queue {
    /// A queue stepping `dt` seconds at a time, beside a pipeline of `slots` slots; both are
    /// bounded so that every number the lab shows stays readable.
    pub fn new(dt: f64, slots: f64) -> Result<Queue> {
        if !(MIN_DT..=MAX_DT).contains(&dt) {
            return Err(Error::Lab(format!(
                "step {dt} s: allowed a number of seconds from {MIN_DT} to {MAX_DT}"
            )));
        }
        if !(slots.fract() == 0.0 && (1.0..=MAX_SLOTS).contains(&slots)) {
            return Err(Error::Lab(format!(
                "slots {slots}: allowed a whole number from 1 to {MAX_SLOTS}"
            )));
        }
        let mut q = Queue {
            t: 0.0,
            backlog: START_BACKLOG,
            arrival: 0.0,
            service: 0.0,
            dt,
            slots,
            bounded: 0.0,
            stalled: 0.0,
            history: VecDeque::new(),
            prediction: None,
            verdict: None,
        };
        q.reset();
        Ok(q)
    }

    /// Backlog back to 4 at t = 0; the rates stay as set.
    pub fn reset(&mut self) {
        self.t = 0.0;
        self.backlog = START_BACKLOG;
        self.bounded = START_BACKLOG.min(self.slots);
        self.stalled = 0.0;
        self.history = VecDeque::from([(0.0, self.backlog, self.bounded)]);
        self.prediction = None;
        self.verdict = None;
    }

    fn rate(what: &str, v: f64) -> Result<f64> {
        if (0.0..=MAX_RATE).contains(&v) {
            Ok(v)
        } else {
            Err(Error::Lab(format!(
                "{what} rate {v}: allowed a number from 0 to {MAX_RATE} tiles per second"
            )))
        }
    }

    pub fn set_arrival(&mut self, v: f64) -> Result<()> {
        self.arrival = Self::rate("arrival", v)?;
        Ok(())
    }

    pub fn set_service(&mut self, v: f64) -> Result<()> {
        self.service = Self::rate("service", v)?;
        Ok(())
    }

    /// Predicts the backlog `horizon` seconds from now (the exercise: one second, two steps).
    pub fn predict(&mut self, backlog: f64, horizon: f64) -> Result<()> {
        if !(0.0..=MAX_BACKLOG).contains(&backlog) {
            return Err(Error::Lab(format!(
                "prediction {backlog}: allowed a backlog from 0 to {MAX_BACKLOG} tiles"
            )));
        }
        self.prediction = Some(Prediction {
            at: self.t + horizon,
            backlog,
        });
        self.verdict = None;
        Ok(())
    }

    /// b(t + dt) = max(0, b + (arrival - service) dt); the bounded pipeline caps at its slots and
    /// stalls the producer for the excess.
    pub fn step(&mut self) {
        let d = (self.arrival - self.service) * self.dt;
        self.backlog = (self.backlog + d).max(0.0);
        let wanted = (self.bounded + d).max(0.0);
        self.bounded = wanted.min(self.slots);
        self.stalled += wanted - self.bounded;
        self.t += self.dt;
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back((self.t, self.backlog, self.bounded));
        if let Some(p) = &self.prediction
            && self.t + 1e-9 >= p.at
        {
            self.verdict = Some((p.backlog, self.backlog));
            self.prediction = None;
        }
    }

    pub fn state_line(&self) -> String {
        format!(
            "t={} s  arrival={}  service={}  backlog={}  | bounded {}-slot pipeline: in flight={} stalled={}",
            num(self.t),
            num(self.arrival),
            num(self.service),
            num(self.backlog),
            num(self.slots),
            num(self.bounded),
            num(self.stalled)
        )
    }
}

/// A number without trailing zeros: 5, 4.5, 0.125.
pub fn num(v: f64) -> String {
    let s = format!("{:.3}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(arrival: f64, service: f64) -> f64 {
        let mut q = Queue::new(DEFAULT_DT, 4.0).unwrap();
        q.reset();
        q.set_arrival(arrival).unwrap();
        q.set_service(service).unwrap();
        q.step();
        q.step();
        q.backlog
    }

    #[test]
    fn the_seeds_exercises() {
        assert_eq!(exercise(3.0, 2.0), 5.0);
        assert_eq!(exercise(3.0, 4.0), 3.0);
    }

    #[test]
    fn backlog_never_goes_negative_and_reset_restores_four() {
        let mut q = Queue::new(0.5, 4.0).unwrap();
        q.set_service(10.0).unwrap();
        q.step();
        assert_eq!(q.backlog, 0.0);
        q.reset();
        assert_eq!((q.t, q.backlog), (0.0, 4.0));
        assert_eq!(q.service, 10.0, "rates survive a reset");
    }

    #[test]
    fn bounded_pipeline_caps_and_stalls() {
        let mut q = Queue::new(0.5, 4.0).unwrap();
        q.set_arrival(3.0).unwrap();
        q.set_service(2.0).unwrap();
        q.step();
        q.step();
        assert_eq!(q.backlog, 5.0);
        assert_eq!(q.bounded, 4.0);
        assert_eq!(q.stalled, 1.0);
    }

    #[test]
    fn predictions_are_checked_at_their_time() {
        let mut q = Queue::new(0.5, 4.0).unwrap();
        q.set_arrival(3.0).unwrap();
        q.set_service(2.0).unwrap();
        q.predict(6.0, 1.0).unwrap();
        q.step();
        assert!(q.verdict.is_none());
        q.step();
        assert_eq!(q.verdict, Some((6.0, 5.0)));
    }

    #[test]
    fn history_keeps_the_latest_points_only() {
        let mut q = Queue::new(0.5, 4.0).unwrap();
        for _ in 0..HISTORY + 10 {
            q.step();
        }
        assert_eq!(q.history.len(), HISTORY);
        assert_eq!(q.history.back().unwrap().0, q.t);
    }

    #[test]
    fn bad_rates_are_refused() {
        let mut q = Queue::new(0.5, 4.0).unwrap();
        assert!(
            q.set_arrival(-1.0)
                .unwrap_err()
                .to_string()
                .contains("allowed a number from 0 to 1000000 tiles per second")
        );
        assert!(q.set_service(f64::NAN).is_err());
        assert!(q.set_arrival(MAX_RATE).is_ok() && q.set_arrival(MAX_RATE * 1.01).is_err());
        assert!(Queue::new(0.0, 4.0).is_err());
        assert!(Queue::new(1e308, 4.0).is_err());
        assert!(Queue::new(0.5, 0.0).is_err());
        assert!(Queue::new(0.5, 1.5).is_err());
        assert!(Queue::new(0.5, 1e308).is_err());
        assert!(Queue::new(MAX_DT, MAX_SLOTS).is_ok());
        assert_eq!(num(5.0), "5");
        assert_eq!(num(4.5), "4.5");
    }
}
