//! Which builds can emit what a claim names. A library built for several architectures compiles
//! every template for each of them, and where an instruction does not exist CUTLASS/CuTe compile
//! it out (an MMA atom becomes a trap, a TMA atom nothing): sgl-kernel's sm_80 build of an sm100
//! GEMM has no TMA and no tcgen05 MMA, its sm_120a build of an sm90 GEMM no wgmma. What a name,
//! a template argument or a source line claims there is about another build of the kernel: it
//! is not judged, with the reason, rather than contradicted.

use super::{Claim, Stated};
use crate::inspect::input::Target;

/// Why a build for `t` cannot emit what `s` names, or None when it can.
pub fn beyond(s: &Stated, t: &Target) -> Option<String> {
    let sm = t.arch.sm();
    // the arch-specific (`sm_90a`) and family (`sm_100f`) builds, which alone have wgmma and
    // tcgen05
    let specific = t.name.ends_with(['a', 'f']);
    let (can, needs) = match s.claim {
        Claim::Cpasync { .. } | Claim::Async => (sm >= 80, "sm_80 and newer".to_string()),
        Claim::Bulk | Claim::Tma => (sm >= 90, "sm_90 and newer".into()),
        Claim::Wgmma => (sm == 90 && specific, "sm_90a only".into()),
        Claim::Tcgen05 => (
            [100, 101, 103, 110].contains(&sm) && specific,
            "the arch-specific builds of sm_100, sm_101, sm_103 and sm_110 only".into(),
        ),
        // an MMA atom of sm_90 or newer is that architecture's own (SM120_16x8x32_TN is
        // sm_120's block-scaled mma.sync); older ones run on every newer architecture
        Claim::Mma => match s.arch {
            Some(n) if n >= 90 => (
                sm / 10 == n / 10 && specific,
                format!("the arch-specific builds of sm_{n} only"),
            ),
            n => {
                let n = n.unwrap_or(70).max(70);
                (sm >= n, format!("sm_{n} and newer"))
            }
        },
        Claim::Sync | Claim::Stages { .. } => (true, String::new()),
    };
    (!can).then(|| {
        format!(
            "{} names {}, which a build for {} cannot emit ({needs}): the claim is about another build of this kernel",
            s.from,
            s.claim.describe(),
            t.name
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::claims::from_name;

    fn t(name: &str) -> Target {
        name.parse().unwrap()
    }

    /// Kernels of sgl-kernel 0.3.21's sm90 `common_ops`, one symbol a line: an sm100 GEMM, an
    /// sm90 one and an sm120 one, each built there for sm_80 to sm_120a.
    const SYMBOLS: &str = include_str!("../../../tests/fixtures/inspect/cutlass-symbols.txt");

    /// Per claim of the symbol, whether a build for `target` is judged on it.
    fn judged(symbol: &str, target: &str) -> Vec<(Claim, bool)> {
        from_name(symbol)
            .iter()
            .map(|s| (s.claim, beyond(s, &t(target)).is_none()))
            .collect()
    }

    #[test]
    fn a_claim_is_judged_only_on_a_build_that_can_emit_it() {
        let [sm100, sm90, sm120] = SYMBOLS.lines().collect::<Vec<_>>()[..] else {
            panic!("three symbols")
        };
        let (tma, tcgen05) = (Claim::Tma, Claim::Tcgen05);
        assert_eq!(judged(sm100, "sm_100a"), [(tma, true), (tcgen05, true)]);
        // the TMA loads of the sm100 mainloop exist in an sm_90a build, its MMA does not
        assert_eq!(judged(sm100, "sm_90a"), [(tma, true), (tcgen05, false)]);
        assert_eq!(judged(sm100, "sm_120a"), [(tma, true), (tcgen05, false)]);
        assert_eq!(judged(sm100, "sm_80"), [(tma, false), (tcgen05, false)]);
        let why = beyond(&from_name(sm100)[1], &t("sm_90")).unwrap();
        assert!(
            why.starts_with(
                "the template argument MainloopSm100TmaUmmaWarpSpecialized names tcgen05 MMA"
            ) && why.contains("a build for sm_90 cannot emit"),
            "{why}"
        );
        // the sm90 mainloop in an sm_120a build: TMA, no wgmma; wgmma in sm_90a alone
        let wgmma = Claim::Wgmma;
        assert_eq!(judged(sm90, "sm_120a"), [(tma, true), (wgmma, false)]);
        assert_eq!(judged(sm90, "sm_90"), [(tma, true), (wgmma, false)]);
        assert_eq!(judged(sm90, "sm_90a"), [(tma, true), (wgmma, true)]);
        // sm_120's block-scaled MMA atom (SM120_16x8x32_TN): only sm_120's own builds have it
        let mma = Claim::Mma;
        assert_eq!(judged(sm120, "sm_120a"), [(tma, true), (mma, true)]);
        assert_eq!(judged(sm120, "sm_90a"), [(tma, true), (mma, false)]);
        // an older MMA atom runs on every newer architecture; a plain name claims by mechanism
        let sm80 = from_name(
            "_ZN7cutlass13device_kernelIN4cute28SM80_16x8x16_F32F16F16F32_TNEEEvNT_6ParamsE",
        );
        assert!(beyond(&sm80[0], &t("sm_120a")).is_none());
        assert!(beyond(&sm80[0], &t("sm_75")).is_some());
        let named = from_name("gemm_tma_kernel");
        assert!(beyond(&named[0], &t("sm_80")).is_some());
        assert!(beyond(&named[0], &t("sm_90")).is_none());
    }
}
