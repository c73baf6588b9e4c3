//! cuBLAS GEMM on the GPU's own stream, so that a benchmark can time cuBLAS beside tilepipe's
//! kernels with the same events. libcublas is loaded at run time; a missing one is an error the
//! caller can report, never a panic.

use super::{DevBuf, Gpu};
use crate::dtype::DType;
use crate::{Error, Result};
use cudarc::cublas::CudaBlas;
use cudarc::cublas::sys::{
    cublasComputeType_t, cublasGemmAlgo_t, cublasMath_t, cublasOperation_t, cudaDataType,
    libraryPropertyType,
};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use std::ffi::c_void;
use std::sync::Arc;

/// Row-major GEMM as tilepipe lays it out: C[M x N] = A[M x K] * B, with B either [K x N] row-major
/// (b_nk = false) or [N x K] row-major (b_nk = true, the weights layout: C = A * B^T).
/// Leading dimensions are in elements (row strides). All three matrices have element type `dtype`;
/// accumulation is f32 (CUBLAS_COMPUTE_32F with the math mode CUBLAS_DEFAULT_MATH, never TF32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmDesc {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub b_nk: bool,
    pub dtype: DType,
    pub lda: usize,
    pub ldb: usize,
    pub ldc: usize,
}

/// cuBLAS's arguments for a row-major GEMM, found through C^T = B^T A^T on column-major storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnMajorCall {
    pub transa: bool,
    pub transb: bool,
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub lda: i32,
    pub ldb: i32,
    pub ldc: i32,
}

fn to_i32(name: &str, v: usize) -> Result<i32> {
    i32::try_from(v).map_err(|_| {
        Error::InvalidShape(format!(
            "cuBLAS GEMM: {name} = {v} does not fit cublasGemmEx's int (allowed: at most {})",
            i32::MAX
        ))
    })
}

fn check_ld(name: &str, ld: usize, matrix: &str, cols: usize) -> Result<()> {
    let least = cols.max(1);
    if ld < least {
        return Err(Error::InvalidShape(format!(
            "cuBLAS GEMM: {name} = {ld} is below the {cols} columns of row-major {matrix} \
             (allowed: {name} >= {least})"
        )));
    }
    Ok(())
}

impl GemmDesc {
    /// Row-major storage read column-major is the transpose, so C^T[N x M] = op(B) * A^T is the
    /// column-major GEMM to ask for: B first, A second, ld values unchanged.
    pub fn column_major(&self) -> Result<ColumnMajorCall> {
        let b_cols = if self.b_nk { self.k } else { self.n };
        check_ld("lda", self.lda, "A", self.k)?;
        check_ld("ldb", self.ldb, "B", b_cols)?;
        check_ld("ldc", self.ldc, "C", self.n)?;
        Ok(ColumnMajorCall {
            // [K x N] row-major is already B^T column-major; [N x K] row-major needs the transpose
            transa: self.b_nk,
            // A[M x K] row-major is A^T[K x M] column-major, the operand as it stands
            transb: false,
            m: to_i32("N", self.n)?,
            n: to_i32("M", self.m)?,
            k: to_i32("K", self.k)?,
            lda: to_i32("ldb", self.ldb)?,
            ldb: to_i32("lda", self.lda)?,
            ldc: to_i32("ldc", self.ldc)?,
        })
    }
}

/// Refuses a buffer shorter than a rows x cols row-major matrix with row stride `ld` needs.
fn check_len(
    matrix: &str,
    bytes: usize,
    rows: usize,
    cols: usize,
    ld: usize,
    dt: DType,
) -> Result<()> {
    let elements = match rows {
        0 => 0,
        _ if cols == 0 => 0,
        _ => (rows - 1).saturating_mul(ld).saturating_add(cols),
    };
    let needed = elements.saturating_mul(dt.size());
    if bytes < needed {
        return Err(Error::InvalidArgument(format!(
            "cuBLAS GEMM: {matrix} ({rows} x {cols} {dt}, row stride {ld}) needs {needed} bytes, \
             its buffer holds {bytes}"
        )));
    }
    Ok(())
}

fn data_type(dt: DType) -> cudaDataType {
    match dt {
        DType::F32 => cudaDataType::CUDA_R_32F,
        DType::F16 => cudaDataType::CUDA_R_16F,
        DType::Bf16 => cudaDataType::CUDA_R_16BF,
    }
}

fn op(transpose: bool) -> cublasOperation_t {
    if transpose {
        cublasOperation_t::CUBLAS_OP_T
    } else {
        cublasOperation_t::CUBLAS_OP_N
    }
}

const NO_CUBLAS: &str = "libcublas could not be loaded (it ships with the CUDA toolkit); put the \
                         folder holding libcublas.so on LD_LIBRARY_PATH";

/// A cuBLAS handle bound to the stream of the Gpu that made it.
pub struct Blas {
    handle: CudaBlas,
    stream: Arc<CudaStream>,
}

impl Gpu {
    /// cuBLAS on this GPU's stream, or why it cannot be used (library missing: the reason names
    /// libcublas and LD_LIBRARY_PATH).
    pub fn blas(&self) -> std::result::Result<Blas, String> {
        // cudarc's lazy loader panics when the library is absent, so probe before any cuBLAS call.
        // SAFETY: only tries to dlopen libcublas (running its initialisers); no cuBLAS call is made.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return Err(NO_CUBLAS.into());
        }
        let handle =
            CudaBlas::new(self.stream.clone()).map_err(|e| format!("cublasCreate: {e}"))?;
        // CUBLAS_COMPUTE_32F without TF32 math is strict fp32: products and sums in full f32,
        // f32 inputs never rounded to TF32. A new handle starts in this mode; set it anyway so
        // the comparison does not rest on a default.
        // SAFETY: the handle is live (owned by `handle`) and the mode is a valid enum value.
        unsafe {
            cudarc::cublas::sys::cublasSetMathMode(
                *handle.handle(),
                cublasMath_t::CUBLAS_DEFAULT_MATH,
            )
        }
        .result()
        .map_err(|e| format!("cublasSetMathMode: {e}"))?;
        Ok(Blas {
            handle,
            stream: self.stream.clone(),
        })
    }
}

impl Blas {
    /// cuBLAS's version as "MAJOR.MINOR.PATCH", for the report. Read as three properties
    /// (cublasGetProperty), which needs no decoding of cublasGetVersion's packed integer.
    pub fn version(&self) -> Result<String> {
        let part = |p: libraryPropertyType| -> Result<i32> {
            let mut v = 0;
            // SAFETY: libcublas is loaded (this Blas holds a handle) and `v` outlives the call.
            unsafe { cudarc::cublas::sys::cublasGetProperty(p, &mut v) }
                .result()
                .map(|_| v)
                .map_err(|e| Error::cuda("cublasGetProperty", e))
        };
        Ok(format!(
            "{}.{}.{}",
            part(libraryPropertyType::MAJOR_VERSION)?,
            part(libraryPropertyType::MINOR_VERSION)?,
            part(libraryPropertyType::PATCH_LEVEL)?
        ))
    }

    /// Enqueues C = A * B (alpha 1, beta 0) on the GPU's stream; returns once submitted (timing
    /// is the caller's: it records CUDA events around it).
    pub fn gemm(&self, d: &GemmDesc, a: &DevBuf, b: &DevBuf, c: &mut DevBuf) -> Result<()> {
        let call = d.column_major()?;
        let (b_rows, b_cols) = if d.b_nk { (d.n, d.k) } else { (d.k, d.n) };
        check_len("A", a.len(), d.m, d.k, d.lda, d.dtype)?;
        check_len("B", b.len(), b_rows, b_cols, d.ldb, d.dtype)?;
        check_len("C", c.len(), d.m, d.n, d.ldc, d.dtype)?;
        // cuBLAS runs in the context current on the calling thread
        self.stream
            .context()
            .bind_to_thread()
            .map_err(|e| Error::cuda("cuCtxSetCurrent", e))?;
        let ty = data_type(d.dtype);
        // COMPUTE_32F takes f32 scalars whatever the matrices' type
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (pa, _ra) = a.device_ptr(&self.stream);
        let (pb, _rb) = b.device_ptr(&self.stream);
        let (pc, _rc) = c.device_ptr_mut(&self.stream);
        // C^T = op(B) A^T: cuBLAS's first operand is tilepipe's B
        let (first, second) = (pb, pa);
        // SAFETY: the handle is live and bound to self.stream; each pointer addresses its own
        // allocation, checked above to hold every element the shapes and ld values reach; C is
        // borrowed mutably so it aliases neither input; alpha and beta are host scalars, which
        // the default (host) pointer mode reads before the call returns.
        unsafe {
            cudarc::cublas::result::gemm_ex(
                *self.handle.handle(),
                op(call.transa),
                op(call.transb),
                call.m,
                call.n,
                call.k,
                (&alpha as *const f32).cast(),
                first as *const c_void,
                ty,
                call.lda,
                second as *const c_void,
                ty,
                call.ldb,
                (&beta as *const f32).cast(),
                pc as *mut c_void,
                ty,
                call.ldc,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| Error::cuda("cublasGemmEx", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Column-major C[m x n] = op(A) op(B), read exactly as cuBLAS reads its arguments.
    fn gemm_cm(t: &ColumnMajorCall, a: &[f64], b: &[f64], c: &mut [f64]) {
        let (m, n, k) = (t.m as usize, t.n as usize, t.k as usize);
        let (lda, ldb, ldc) = (t.lda as usize, t.ldb as usize, t.ldc as usize);
        for j in 0..n {
            for i in 0..m {
                let mut s = 0.0;
                for p in 0..k {
                    let x = if t.transa {
                        a[p + i * lda]
                    } else {
                        a[i + p * lda]
                    };
                    let y = if t.transb {
                        b[j + p * ldb]
                    } else {
                        b[p + j * ldb]
                    };
                    s += x * y;
                }
                c[i + j * ldc] = s;
            }
        }
    }

    /// Row-major storage of the smallest length `check_len` allows; padding holds NaN so that a
    /// read of it poisons the result.
    fn matrix(rows: usize, cols: usize, ld: usize, seed: f64) -> Vec<f64> {
        let mut v = vec![f64::NAN; (rows - 1) * ld + cols];
        for r in 0..rows {
            for c in 0..cols {
                v[r * ld + c] = seed + (r * 31 + c * 7) as f64 * 0.125 - 3.0;
            }
        }
        v
    }

    fn desc(m: usize, n: usize, k: usize, b_nk: bool, pad: usize) -> GemmDesc {
        GemmDesc {
            m,
            n,
            k,
            b_nk,
            dtype: DType::F32,
            lda: k + pad,
            ldb: if b_nk { k } else { n } + 2 * pad,
            ldc: n + 3 * pad,
        }
    }

    #[test]
    fn row_major_b_maps_to_b_first_without_transposes() {
        let c = desc(5, 3, 7, false, 0).column_major().unwrap();
        let want = ColumnMajorCall {
            transa: false,
            transb: false,
            m: 3,
            n: 5,
            k: 7,
            lda: 3,
            ldb: 7,
            ldc: 3,
        };
        assert_eq!(c, want);
    }

    #[test]
    fn weights_layout_maps_to_transposed_first_operand() {
        let c = desc(5, 3, 7, true, 1).column_major().unwrap();
        let want = ColumnMajorCall {
            transa: true,
            transb: false,
            m: 3,
            n: 5,
            k: 7,
            lda: 9,
            ldb: 8,
            ldc: 6,
        };
        assert_eq!(c, want);
    }

    #[test]
    fn column_major_call_computes_the_row_major_product() {
        for (m, n, k) in [(5, 3, 7), (1, 4, 2), (6, 1, 3), (3, 5, 1)] {
            for b_nk in [false, true] {
                for pad in [0, 2] {
                    let d = desc(m, n, k, b_nk, pad);
                    let (br, bc) = if b_nk { (n, k) } else { (k, n) };
                    let a = matrix(m, k, d.lda, 0.5);
                    let b = matrix(br, bc, d.ldb, -1.25);
                    let call = d.column_major().unwrap();
                    let mut got = vec![f64::NAN; (m - 1) * d.ldc + n];
                    gemm_cm(&call, &b, &a, &mut got);
                    for i in 0..m {
                        for j in 0..n {
                            let want: f64 = (0..k)
                                .map(|p| {
                                    let bv = if b_nk {
                                        b[j * d.ldb + p]
                                    } else {
                                        b[p * d.ldb + j]
                                    };
                                    a[i * d.lda + p] * bv
                                })
                                .sum();
                            let g = got[i * d.ldc + j];
                            assert_eq!(g, want, "{d:?}: C[{i}][{j}]");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn too_small_leading_dimension_is_refused_with_the_bound() {
        let mut d = desc(5, 3, 7, true, 0);
        d.ldb = 3; // the weights layout's rows are K = 7 long
        let e = d.column_major().unwrap_err().to_string();
        assert!(
            e.starts_with("invalid shape:") && e.contains("ldb = 3") && e.contains("ldb >= 7"),
            "{e}"
        );
        let mut d = desc(5, 3, 7, false, 0);
        d.ldc = 2;
        let e = d.column_major().unwrap_err().to_string();
        assert!(e.contains("ldc = 2") && e.contains("ldc >= 3"), "{e}");
    }

    #[test]
    fn dimension_beyond_i32_is_refused() {
        let mut d = desc(5, 3, 7, false, 0);
        d.m = 1 << 31;
        let e = d.column_major().unwrap_err().to_string();
        assert!(
            e.contains("M = 2147483648") && e.contains("at most 2147483647"),
            "{e}"
        );
    }

    #[test]
    fn missing_library_reason_names_libcublas_and_the_search_path() {
        assert!(NO_CUBLAS.contains("libcublas") && NO_CUBLAS.contains("LD_LIBRARY_PATH"));
    }

    #[test]
    fn short_buffer_is_refused_naming_the_matrix() {
        // 5 x 7 f16 with row stride 9: 4 * 9 + 7 = 43 elements, 86 bytes
        assert!(check_len("A", 86, 5, 7, 9, DType::F16).is_ok());
        let e = check_len("A", 85, 5, 7, 9, DType::F16)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("invalid argument:")
                && e.contains("A (5 x 7 f16")
                && e.contains("86 bytes"),
            "{e}"
        );
        assert!(check_len("C", 0, 0, 7, 7, DType::F32).is_ok());
    }
}
