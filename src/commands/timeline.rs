//! Which of the named variants a timeline can trace on one problem: those this GPU or the problem
//! cannot take are left out with the reason (the trace itself is the engine's `trace::capture`).

use crate::Result;
use crate::engine::Engine;
use crate::pipeline::Variant;
use crate::workload::{VariantOf, Workload};

/// The variants `names` picks (names or prefixes), fitted to `p`, and those this GPU or `p`
/// cannot run, each with the reason.
pub fn traceable<W: Workload>(
    e: &Engine,
    w: &W,
    names: &str,
    p: &W::Problem,
) -> Result<(Vec<VariantOf<W>>, Vec<String>)> {
    let all = Variant::select(w.catalogue(crate::workload::Problem::dtype(p)), Some(names))?;
    let (mut ok, mut why) = (Vec::new(), Vec::new());
    for v in all {
        let f = w.fit(&v, &[p]);
        match w.can_implement(&f, p, e.info()) {
            Err(reason) => why.push(format!("{}: {reason}", v.name)),
            Ok(()) => ok.push(f),
        }
    }
    Ok((ok, why))
}
