//! A run that outlives a faulting kernel. A sticky fault (an illegal address, a trap) poisons the
//! whole CUDA context: every later call fails. The faulting variant is that fault's only victim:
//! its failure is kept, the harness is dropped (the context goes with its last handle), a fresh one
//! is opened and the run starts again without it.

use super::{RunOptions, RunOutcome, run, selected};
use crate::harness::Harness;
use crate::report::VariantResult;
use crate::{Error, Result};

/// At most this many fresh contexts per run: past it, the run ends with what it has.
pub const MAX_FAULTS: usize = 8;

/// `run`, going on past variants that fault the context. Returns the last harness (for whatever
/// the caller does next) and the outcome, with each faulting variant's failure in its place.
pub fn run_isolated(
    open: &mut dyn FnMut() -> Result<Harness>,
    o: &RunOptions,
) -> Result<(Harness, RunOutcome)> {
    let mut opts = o.clone();
    let mut faulted: Vec<VariantResult> = Vec::new();
    loop {
        let h = open()?;
        let mut outcome = run(&h, &opts)?;
        let lost = match &outcome.fatal {
            Some(Error::ContextLost { variant, .. }) if faulted.len() < MAX_FAULTS => outcome
                .results
                .variants
                .iter()
                .find(|r| &r.name == variant && r.mechanism != crate::mechanism::Mechanism::Sync)
                .cloned(),
            _ => None,
        };
        match lost {
            Some(r) => {
                h.progress.note(&format!(
                    "{}: {}; going on in a fresh context without it",
                    r.name,
                    r.detail.as_deref().unwrap_or("faulted")
                ));
                opts.exclude.push(r.name.clone());
                faulted.push(r);
                drop(outcome);
                drop(h);
            }
            None => {
                let order = selected(h.workload, o)?;
                let r = &mut outcome.results;
                merge(&mut r.variants, &mut r.notes, faulted, &order);
                return Ok((h, outcome));
            }
        }
    }
}

/// Puts each faulting variant's result back among the others, in the order of the selection, with
/// a note for each.
fn merge(
    variants: &mut Vec<VariantResult>,
    notes: &mut Vec<String>,
    faulted: Vec<VariantResult>,
    order: &[crate::variant::Variant],
) {
    let pos = |name: &str| {
        order
            .iter()
            .position(|v| v.name == name)
            .unwrap_or(usize::MAX)
    };
    for r in faulted {
        notes.push(format!(
            "{} faulted the GPU context ({}); the run went on in a fresh context without it",
            r.name,
            r.detail.as_deref().unwrap_or("no detail")
        ));
        variants.push(r);
    }
    variants.sort_by_key(|r| pos(&r.name));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Status;
    use crate::variant::{BuildConfig, Variant};

    #[test]
    fn faulting_variants_go_back_in_selection_order_with_a_note() {
        let order = Variant::catalogue();
        let cfg = BuildConfig::new(crate::dtype::DType::Bf16, 4096, None);
        let result = |v: &Variant| VariantResult::new(v, &cfg);
        let mut variants = vec![result(&order[0]), result(&order[3])];
        let mut notes = Vec::new();
        let mut bad = result(&order[1]);
        bad.status = Status::Failed;
        bad.detail = Some("valid: an illegal memory access".into());
        merge(&mut variants, &mut notes, vec![bad], &order);
        let names: Vec<&str> = variants.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, [&order[0].name, &order[1].name, &order[3].name]);
        assert_eq!(variants[1].status, Status::Failed);
        assert!(notes[0].contains("illegal memory access"));
    }
}
