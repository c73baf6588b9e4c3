//! What a row variant needs of a view: the register-staged mechanisms narrow their copy unit to
//! take any element-aligned view; the others need rows aligned for their copies, a tensor map TMA
//! can describe, or (the wrong-stride control) a view strided enough to be broken.

use super::View;
use super::catalogue::{self, RowVariant};
use super::config::BuildConfig;
use super::params::row_map;
use crate::pipeline::{Control, Mechanism};

/// `v` fitted to every view it will run on: the register-staged mechanisms (the sequential
/// baseline among them) narrow their copy unit, down to one element, until it divides each view's
/// offset and row stride in bytes, so they take any element-aligned view. Others are unchanged.
pub fn fit(v: &RowVariant, views: &[View], cfg: &BuildConfig) -> RowVariant {
    let mut fitted = v.clone();
    if matches!(v.mechanism, Mechanism::Sync | Mechanism::Regprefetch) {
        let es = cfg.dtype.size();
        let divides = |b: usize, view: &View| {
            (view.offset * es).is_multiple_of(b) && (view.row_stride * es).is_multiple_of(b)
        };
        let mut b = v.copy_bytes as usize;
        while b > es && !views.iter().all(|view| divides(b, view)) {
            b /= 2;
        }
        fitted.copy_bytes = b as u32;
    }
    fitted
}

/// Why `v` cannot take this view, if it cannot: each mechanism's alignment, a tensor map TMA can
/// describe, a view strided enough for the wrong-stride control.
pub fn can_implement(v: &RowVariant, view: &View, cfg: &BuildConfig) -> Result<(), String> {
    let es = cfg.dtype.size();
    let align = match v.mechanism {
        // direct reads the rows in place as 16-byte vectors
        Mechanism::Bulk | Mechanism::Tma | Mechanism::Direct => 16,
        Mechanism::MemcpyAsyncPipeline | Mechanism::MemcpyAsyncBarrier => {
            catalogue::bytes_per_copy(v, cfg) as usize
        }
        _ => v.copy_bytes as usize,
    };
    if !(view.offset * es).is_multiple_of(align) || !(view.row_stride * es).is_multiple_of(align) {
        return Err(format!(
            "rows must start {align}-byte aligned: offset {} B and row stride {} B must be multiples of {align}",
            view.offset * es,
            view.row_stride * es
        ));
    }
    if v.mechanism == Mechanism::Tma
        && let Err(e) = row_map(view, cfg.dtype, cfg.tile_rows, 0, None)
    {
        return Err(format!("no valid tensor map: {e}"));
    }
    if v.control == Some(Control::WrongStride) && view.row_stride < view.hidden + 16 / es {
        return Err("the wrong-stride control needs a view strided by at least 16 bytes".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::pipeline::Pipe;
    use catalogue::row;

    #[test]
    fn the_baseline_fits_any_element_aligned_view() {
        let all = catalogue::catalogue();
        let by = |n: &str| all.iter().find(|v| v.name == n).unwrap().clone();
        let (sync, cp) = (by("sync"), by("cpasync-cg16-s2"));
        let view =
            |stride, offset, dt| View::new(64, 4096, Some(stride), offset, None, dt).unwrap();
        for (dt, stride, offset, want) in [
            (DType::Bf16, 4096, 0, 16),
            (DType::Bf16, 4096, 1, 2),
            (DType::Bf16, 4100, 0, 8),
            (DType::F16, 4098, 4, 4),
            (DType::F32, 4096, 3, 4),
            (DType::F32, 4098, 0, 8),
        ] {
            let cfg = BuildConfig::new(dt, 4096, None);
            let v = view(stride, offset, dt);
            let fitted = fit(&sync, &[v], &cfg);
            assert_eq!(
                fitted.copy_bytes, want,
                "{dt} stride {stride} offset {offset}"
            );
            assert_eq!(can_implement(&fitted, &v, &cfg), Ok(()));
            // the fitted unit divides every view at once
            let aligned = view(4096, 0, dt);
            assert_eq!(fit(&sync, &[aligned, v], &cfg).copy_bytes, want);
            // other mechanisms are not narrowed: they take the view or say why not
            assert_eq!(fit(&cp, &[v], &cfg), cp);
            if want < 16 {
                let why = can_implement(&cp, &v, &cfg).unwrap_err();
                assert!(why.contains("16-byte aligned"), "{why}");
            }
        }
    }

    #[test]
    fn each_mechanism_names_what_it_needs_of_a_view() {
        let c = BuildConfig::new(DType::Bf16, 4096, None);
        let cp = row(Pipe::cpasync(2, 16));
        let ok = View::new(100, 4096, Some(4160), 64, None, DType::Bf16).unwrap();
        assert_eq!(can_implement(&cp, &ok, &c), Ok(()));
        let odd = View::new(100, 4096, Some(4100), 4, None, DType::Bf16).unwrap();
        let why = can_implement(&cp, &odd, &c).unwrap_err();
        assert!(why.contains("16-byte aligned"), "{why}");
        // 4-byte copies take rows aligned to 4 bytes
        assert_eq!(can_implement(&row(Pipe::cpasync(2, 4)), &odd, &c), Ok(()));
        let tma = row(Pipe::ring(Mechanism::Tma, 2, false));
        let why = can_implement(&tma, &odd, &c).unwrap_err();
        assert!(why.contains("aligned"), "{why}");
        // direct reads 16-byte vectors in place: any 16-byte aligned stride, never narrowed
        let direct = catalogue::direct(1);
        assert_eq!(can_implement(&direct, &ok, &c), Ok(()));
        let why = can_implement(&direct, &odd, &c).unwrap_err();
        assert!(why.contains("16-byte aligned"), "{why}");
        assert_eq!(fit(&direct, &[odd], &c), direct);
        let dense = View::new(100, 4096, None, 0, None, DType::Bf16).unwrap();
        let ctl = catalogue::controls()
            .into_iter()
            .find(|v| v.control == Some(Control::WrongStride))
            .unwrap();
        assert!(
            can_implement(&ctl, &dense, &c)
                .unwrap_err()
                .contains("strided")
        );
        assert_eq!(can_implement(&ctl, &ok, &c), Ok(()));
    }
}
