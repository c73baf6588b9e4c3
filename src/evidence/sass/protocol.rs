//! Protocol facts read from the emitted SASS beside the census: mbarriers initialised by one
//! thread and waited on by others before a block-wide barrier has published the initialisation (a
//! hazard known from other projects' bug trackers), and a slot released while a wgmma may still
//! read it.

use super::parse::Function;

/// What a fact says of a kernel: held (how), broken (where), or None where it does not apply.
pub type Verdict = Option<Result<String, String>>;
/// A fact read from a kernel's SASS.
pub type Fact<'a> = &'a dyn Fn(&Function) -> Verdict;

/// For a kernel that initialises mbarriers (`SYNCS.EXCH.64`): whether a block-wide barrier
/// (`BAR.SYNC` on barrier 0 without a thread count) stands after the last initialisation and
/// before the first phase wait (`SYNCS.PHASECHK`), in listing order. The initialisation runs once
/// at the top of these kernels, before any loop, so listing order is execution order there.
/// None when the kernel initialises no mbarrier.
pub fn init_published(f: &Function) -> Verdict {
    let at = |pred: fn(&str, &str) -> bool| -> Vec<u32> {
        f.instructions
            .iter()
            .filter(|i| pred(&i.opcode, &i.operands))
            .map(|i| i.offset)
            .collect()
    };
    let last_init = *at(|op, _| op.starts_with("SYNCS.EXCH.64")).iter().max()?;
    let first_wait = at(|op, _| op.starts_with("SYNCS.PHASECHK"))
        .into_iter()
        .min();
    let barrier = at(|op, args| op.starts_with("BAR.SYNC") && args == "0x0")
        .into_iter()
        .find(|&b| b > last_init && first_wait.is_none_or(|w| b < w));
    Some(match (barrier, first_wait) {
        (Some(b), Some(w)) => Ok(format!(
            "mbarrier init (last at {last_init:#06x}) published by BAR.SYNC 0x0 at {b:#06x} before the first wait at {w:#06x}"
        )),
        (Some(b), None) => Ok(format!(
            "mbarrier init (last at {last_init:#06x}) published by BAR.SYNC 0x0 at {b:#06x}; no wait"
        )),
        (None, w) => Err(format!(
            "no block barrier between the last mbarrier init at {last_init:#06x} and the first wait{}",
            w.map_or(String::new(), |w| format!(" at {w:#06x}"))
        )),
    })
}

/// The wgmma groups a build may leave in flight at a slot's release, as its options say
/// (`-DMMA_LAG=N`: a step's own group runs on while the previous step's slot is released); 0
/// where none is said.
pub fn mma_lag(options: &[String]) -> u32 {
    options
        .iter()
        .find_map(|o| o.strip_prefix("-DMMA_LAG="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// For a kernel that issues wgmma (`HGMMA`): whether every one is followed, before the next
/// mbarrier arrive (`SYNCS.ARRIVE*`), by a `WARPGROUP.DEPBAR.LE gsb0, N` with N at most the
/// build's `lag`, in listing order. tilepipe's consumers release a slot by an arrive right after
/// the step's MMAs and their wait, so an arrive with no such wait since an MMA frees a slot the
/// MMA may still read: the producer's next copy would race it. A wait that leaves the newest N
/// groups in flight retires the step before's (a lag of 1: each step releases the previous
/// step's slot); repeated each step, at most `lag` groups are then ever in flight at a release.
/// The monitor's wgmma-in-flight rule sees this in a checking build's run; this sees it in every
/// clean build's SASS, with no GPU. Listing order is execution order here: each step's MMAs,
/// their wait and the release are one straight run inside the loop. None without wgmma.
pub fn wgmma_retired(f: &Function, lag: u32) -> Verdict {
    let mut unwaited: Option<u32> = None;
    let (mut mmas, mut arrives) = (0, 0);
    for i in &f.instructions {
        if i.opcode.starts_with("HGMMA") {
            mmas += 1;
            unwaited.get_or_insert(i.offset);
        } else if i.opcode.starts_with("WARPGROUP.DEPBAR.LE") {
            let left = i
                .operands
                .rsplit(", ")
                .next()
                .and_then(|n| u32::from_str_radix(n.trim_start_matches("0x"), 16).ok());
            if left.is_some_and(|n| n <= lag) {
                unwaited = None;
            }
        } else if i.opcode.starts_with("SYNCS.ARRIVE") {
            if let Some(mma) = unwaited {
                return Some(Err(format!(
                    "the wgmma at {mma:#06x} is still in flight at the mbarrier arrive at {:#06x} (no WARPGROUP.DEPBAR.LE gsb0, {lag:#x} between): a slot released while an MMA may read it",
                    i.offset
                )));
            }
            arrives += 1;
        }
    }
    (mmas > 0).then(|| {
        Ok(format!(
            "every one of {mmas} wgmma waited for (WARPGROUP.DEPBAR.LE gsb0, {lag:#x}) before the next of {arrives} mbarrier arrives"
        ))
    })
}

/// Whether every uniform register the kernel reads is written somewhere in it: NVRTC 13.0 built
/// a window's hinted cp.async (`cpasync-cg16-s2-el` on rows that start inside a chunk) as an
/// LDGSTS through UR0 and UR1, which nothing wrote, an illegal instruction on the GPU. A write is
/// a uniform register as the first operand (or the second, after a predicate: `ELECT P0, UR4`),
/// covering the pair of a `.64` or `.WIDE` form and the four of a `.128`; every other mention is
/// a read. The listing is the kernel's whole text, its subroutines (a division's slow path)
/// included, so what a caller writes for its subroutine counts. None where the kernel reads no
/// uniform register.
pub fn uniforms_written(f: &Function) -> Verdict {
    let number = |t: &str| t.strip_prefix("UR").and_then(|n| n.parse::<u32>().ok());
    let mut written = std::collections::BTreeSet::new();
    let mut reads: Vec<(u32, u32, &str)> = Vec::new();
    for i in &f.instructions {
        let ops: Vec<&str> = i.operands.split(", ").map(str::trim).collect();
        let predicate = |t: &str| t.starts_with('P') || t.starts_with("UP") || t.starts_with("!");
        let dest = match ops.as_slice() {
            [first, ..] if number(first).is_some() => Some(0),
            [first, second, ..] if predicate(first) && number(second).is_some() => Some(1),
            _ => None,
        };
        if let Some(d) = dest {
            let n = number(ops[d]).expect("a uniform register");
            let width = match &i.opcode {
                op if op.contains(".128") => 4,
                op if op.contains(".64") || op.contains(".WIDE") => 2,
                _ => 1,
            };
            written.extend(n..n + width);
        }
        for (k, op) in ops.iter().enumerate() {
            if Some(k) == dest {
                continue;
            }
            let mut rest = *op;
            while let Some(at) = rest.find("UR") {
                let digits: String = rest[at + 2..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                let whole = at == 0 || !rest.as_bytes()[at - 1].is_ascii_alphanumeric();
                if let (true, Ok(n)) = (whole, digits.parse::<u32>()) {
                    reads.push((n, i.offset, i.opcode.as_str()));
                }
                rest = &rest[at + 2..];
            }
        }
    }
    if reads.is_empty() {
        return None;
    }
    Some(match reads.iter().find(|(n, ..)| !written.contains(n)) {
        Some((n, at, op)) => Err(format!(
            "the {op} at {at:#06x} reads UR{n}, which no instruction of the kernel writes: the compiler's own bug, an illegal instruction or a wrong operand on the GPU"
        )),
        None => Ok(format!(
            "every one of {} uniform register read(s) is written in the kernel",
            reads.len()
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::sass::parse::parse;

    fn kernel(body: &str) -> Function {
        let text = format!(".text.k:\n{body}");
        parse(&text).remove(0)
    }

    const MMA: &str = "        /*0100*/                   HGMMA.64x128x16.F32.BF16 R24, R88, gdesc[UR4].tnspB, R24, gsb0 ;\n";
    const ARRIVE: &str =
        "        /*0300*/                   SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR9], RZ ;\n";

    #[test]
    fn an_arrive_after_a_retired_wgmma_holds_and_one_before_it_is_named() {
        let retired = format!(
            "{MMA}        /*0200*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n{ARRIVE}"
        );
        let ok = wgmma_retired(&kernel(&retired), 0).unwrap().unwrap();
        assert!(ok.contains("every one of 1 wgmma waited for"), "{ok}");
        let missing = wgmma_retired(&kernel(&format!("{MMA}{ARRIVE}")), 0)
            .unwrap()
            .unwrap_err();
        assert!(
            missing.contains("wgmma at 0x0100 is still in flight at the mbarrier arrive at 0x0300"),
            "{missing}"
        );
        // a wait that keeps one group in flight retires nothing of one group
        let one_left = format!(
            "{MMA}        /*0200*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;\n{ARRIVE}"
        );
        assert!(wgmma_retired(&kernel(&one_left), 0).unwrap().is_err());
        assert_eq!(
            wgmma_retired(&kernel(ARRIVE), 0),
            None,
            "no wgmma, nothing to judge"
        );
    }

    #[test]
    fn a_lagged_release_may_leave_the_newest_group_and_no_more() {
        let mma = |at: u32| {
            format!(
                "        /*{at:04x}*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24, gsb0 ;\n"
            )
        };
        let wait = |at: u32, n: u32| {
            format!("        /*{at:04x}*/                   WARPGROUP.DEPBAR.LE gsb0, {n:#x} ;\n")
        };
        let arrive = |at: u32| {
            format!(
                "        /*{at:04x}*/                   SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR9], RZ ;\n"
            )
        };
        // two steps: each commits its group, waits for all but it, releases the step before
        let steps = [
            mma(0x100),
            wait(0x110, 1),
            arrive(0x120),
            mma(0x200),
            wait(0x210, 1),
            arrive(0x220),
        ]
        .concat();
        assert!(wgmma_retired(&kernel(&steps), 1).unwrap().is_ok());
        assert!(
            wgmma_retired(&kernel(&steps), 0).unwrap().is_err(),
            "unlagged, one group is too many"
        );
        // a second step with no wait: its group and the one before in flight at its release
        let unwaited = [
            mma(0x100),
            wait(0x110, 1),
            arrive(0x120),
            mma(0x200),
            arrive(0x220),
        ]
        .concat();
        let e = wgmma_retired(&kernel(&unwaited), 1).unwrap().unwrap_err();
        assert!(
            e.contains("wgmma at 0x0200") && e.contains("arrive at 0x0220"),
            "{e}"
        );
        assert_eq!(mma_lag(&["-DMMA_LAG=1".into(), "-DBM=128".into()]), 1);
        assert_eq!(mma_lag(&["-DBM=128".into()]), 0);
    }

    #[test]
    fn a_uniform_register_read_that_nothing_wrote_is_named() {
        // NVRTC 13.0's hinted cp.async on a window: the shared base and the policy through UR0, UR1
        let bad = "        /*0100*/                   ULDC.64 UR4, c[0x0][0x208] ;\n        /*0200*/                   LDGSTS.E.BYPASS.128 [R3+UR0], desc[UR1][R12.64], P0 ;\n";
        let why = uniforms_written(&kernel(bad)).unwrap().unwrap_err();
        assert!(
            why.contains("LDGSTS.E.BYPASS.128 at 0x0200 reads UR0"),
            "{why}"
        );
        // the same copy through a policy the kernel made, and the pair a .64 load writes
        let good = "        /*0100*/                   ULDC.64 UR4, c[0x0][0x208] ;\n        /*0110*/                   ELECT P0, UR6, PT ;\n        /*0120*/                   UIMAD.WIDE.U32 UR8, UR6, UR5, URZ ;\n        /*0200*/                   LDGSTS.E.BYPASS.128 [R3+UR9], desc[UR4][R12.64], P0 ;\n";
        let ok = uniforms_written(&kernel(good)).unwrap().unwrap();
        assert!(
            ok.contains("every one of 4 uniform register read(s)"),
            "{ok}"
        );
        assert_eq!(
            uniforms_written(&kernel(ARRIVE.replace("[UR9]", "[R9]").as_str())),
            None
        );
        // a call changes nothing: the subroutine's text is the kernel's
        let call = format!("{bad}        /*0300*/                   CALL.REL.NOINC 0x400 ;\n");
        assert!(uniforms_written(&kernel(&call)).unwrap().is_err());
    }
}
