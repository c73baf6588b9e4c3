//! What one group of the suite builds and runs: every correct variant on every suite case (fitted
//! to it), each correct variant stressed on its stress cases, each control on its control cases
//! beside its correct twin; each distinct build once.

use crate::engine::{Engine, Job};
use crate::pipeline::{Instrument, Variant};
use crate::workload::{Case, Problem, VariantOf, Workload};
use std::collections::HashMap;

/// A build, as the suite tells builds apart: the fitted variant (its copy width, the windows and
/// split stores a view needs) and what the build adds.
type Key<S> = (Variant<S>, Instrument);

/// One group's plan: the distinct builds, and what runs on them (indices into `jobs`).
/// Builds run many times: the build, its twin's clean build, the cases.
pub type Repeated<P> = Vec<(usize, Option<usize>, Vec<Case<P>>)>;

/// A variant fitted to the cases it can take.
pub type Fitted<W> = (VariantOf<W>, Vec<Case<<W as Workload>::Problem>>);

/// The variants of a group: the correct ones and the controls.
pub type Lineup<'a, W> = (&'a [VariantOf<W>], &'a [VariantOf<W>]);

pub struct GroupPlan<W: Workload> {
    pub jobs: Vec<Job<W>>,
    /// Per suite case, its builds in catalogue order (the baseline first).
    pub valid: Vec<(Case<W::Problem>, Vec<usize>)>,
    /// Stressed builds of correct variants.
    pub stress: Repeated<W::Problem>,
    /// Controls.
    pub controls: Repeated<W::Problem>,
    /// What the group leaves out, each with the reason.
    pub skipped: Vec<String>,
}

/// What a group leaves out: per variant and reason, the cases it holds for (in order), so that a
/// variant refused on every case of a group for one reason is one line.
#[derive(Default)]
struct Skips(Vec<(String, String, Vec<String>)>);

impl Skips {
    fn push(&mut self, name: &str, case: Option<&str>, why: String) {
        let case = case.map(str::to_string);
        match self.0.iter_mut().find(|(n, w, _)| n == name && *w == why) {
            Some((_, _, cases)) => cases.extend(case),
            None => self
                .0
                .push((name.to_string(), why, case.into_iter().collect())),
        }
    }

    fn lines(self, tag: &str) -> Vec<String> {
        self.0
            .into_iter()
            .map(|(name, why, cases)| match cases.is_empty() {
                true => format!("{name} {tag}: {why}"),
                false => format!("{name} {tag} [{}]: {why}", cases.join(", ")),
            })
            .collect()
    }
}

struct Jobs<W: Workload> {
    jobs: Vec<Job<W>>,
    index: HashMap<Key<W::Shape>, usize>,
}

impl<W: Workload> Jobs<W> {
    fn of(&mut self, v: &Variant<W::Shape>, group: &W::Problem, ins: Instrument) -> usize {
        let key = (v.clone(), ins);
        *self.index.entry(key).or_insert_with(|| {
            self.jobs.push(Job::new(v, group, ins));
            self.jobs.len() - 1
        })
    }
}

/// `v` fitted to the cases among `cases` it can take; the others are skipped with the reason.
fn fitted<W: Workload>(
    e: &Engine,
    w: &W,
    v: &Variant<W::Shape>,
    cases: &[Case<W::Problem>],
    skipped: &mut Skips,
) -> Option<Fitted<W>> {
    let problems: Vec<&W::Problem> = cases.iter().map(|c| &c.problem).collect();
    let f = w.fit(v, &problems);
    let taken: Vec<Case<W::Problem>> = cases
        .iter()
        .filter(|c| match w.can_implement(&f, &c.problem, e.info()) {
            Ok(()) => true,
            Err(why) => {
                skipped.push(&f.name, Some(&c.name), why);
                false
            }
        })
        .cloned()
        .collect();
    (!taken.is_empty()).then_some((f, taken))
}

pub fn plan<W: Workload>(
    e: &Engine,
    w: &W,
    (tag, group): (&str, &W::Problem),
    (correct, controls): Lineup<W>,
    cases: Vec<Case<W::Problem>>,
) -> crate::Result<GroupPlan<W>> {
    let mut jobs = Jobs {
        jobs: Vec::new(),
        index: HashMap::new(),
    };
    let mut skipped = Skips::default();
    let mut valid = Vec::new();
    for case in cases {
        let mut on = Vec::new();
        for v in correct {
            let one = std::slice::from_ref(&case);
            if let Some((f, _)) = fitted(e, w, v, one, &mut skipped) {
                on.push(jobs.of(&f, group, Instrument::CLEAN));
            }
        }
        valid.push((case, on));
    }
    let catalogue = w.catalogue(group.dtype());
    // a stressed build's twin may be its own clean build: the sleeps change no arithmetic
    let twin_of = |v: &Variant<W::Shape>,
                   cases: &[Case<W::Problem>],
                   jobs: &mut Jobs<W>,
                   skipped: &mut Skips| {
        let t = w.twin(v, &catalogue)?;
        let (f, _) = fitted(e, w, t, cases, skipped)?;
        Some(jobs.of(&f, group, Instrument::CLEAN))
    };
    let mut stress = Vec::new();
    for v in correct {
        let cases = w.stress_cases(group, v, e.info())?;
        if let Some((f, cases)) = fitted(e, w, v, &cases, &mut skipped) {
            let twin = twin_of(v, &cases, &mut jobs, &mut skipped);
            stress.push((jobs.of(&f, group, Instrument::STRESSED), twin, cases));
        }
    }
    let mut ctl = Vec::new();
    for v in controls {
        let (cases, ins) = w.control_cases(group, v, e.info())?;
        let Some((f, cases)) = fitted(e, w, v, &cases, &mut skipped) else {
            continue;
        };
        match twin_of(v, &cases, &mut jobs, &mut skipped) {
            // monitored: a broken rule is caught on every run, whatever the data shows
            Some(twin) => {
                let ins = Instrument {
                    monitor: true,
                    ..ins
                };
                ctl.push((jobs.of(&f, group, ins), Some(twin), cases))
            }
            None => skipped.push(&v.name, None, "no correct twin to compare with".into()),
        }
    }
    Ok(GroupPlan {
        jobs: jobs.jobs,
        valid,
        stress,
        controls: ctl,
        skipped: skipped.lines(tag),
    })
}
