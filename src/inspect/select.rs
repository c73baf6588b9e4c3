//! Which cubins and kernels are inspected: `--kernel` as a regular expression (a plain name is
//! one, matching where it appears) or, when it is not a valid one, as a literal substring,
//! tried against the symbol, the short name and the demangled name; and the kernel symbols a
//! cubin's ELF symbol table lists, so that a cubin holding none that match is never
//! disassembled.

use super::names;
use crate::{Error, Result};
use object::read::elf::{ElfFile64, Sym};
use object::{Endianness, Object, ObjectSymbol};
use regex::Regex;
use std::path::Path;

#[derive(Debug, Clone)]
pub struct KernelFilter {
    text: String,
    re: Regex,
}

impl KernelFilter {
    pub fn new(text: &str) -> Result<KernelFilter> {
        if text.trim().is_empty() {
            return Err(Error::InvalidArgument(
                "--kernel is empty (allowed: a kernel's symbol, its name or part of it, or a regular expression)".into(),
            ));
        }
        let re = Regex::new(text)
            .or_else(|_| Regex::new(&regex::escape(text)))
            .map_err(|e| Error::InvalidArgument(format!("--kernel '{text}': {e}")))?;
        Ok(KernelFilter {
            text: text.to_string(),
            re,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether a kernel of this symbol is asked for.
    pub fn matches(&self, symbol: &str) -> bool {
        symbol == self.text
            || self.re.is_match(symbol)
            || self.re.is_match(&names::display_name(symbol))
            || names::demangle(symbol).is_some_and(|d| self.re.is_match(&d))
    }
}

/// STO_CUDA_ENTRY in a symbol's st_other: a kernel entry point.
const STO_CUDA_ENTRY: u8 = 0x10;

/// The kernel entry points a cubin's symbol table names (every function when it marks none),
/// with their symbol indices (what `nvdisasm -fun` takes).
pub fn kernel_symbols(cubin: &Path) -> Result<Vec<(usize, String)>> {
    let data = std::fs::read(cubin).map_err(|e| Error::io(cubin, e))?;
    let bad = |e: object::Error| Error::Disassembler {
        what: cubin.display().to_string(),
        detail: format!("not a readable ELF file: {e}"),
    };
    let elf = ElfFile64::<Endianness>::parse(&*data).map_err(bad)?;
    let mut entries = Vec::new();
    let mut functions = Vec::new();
    for sym in elf.symbols() {
        let raw = sym.elf_symbol();
        if raw.st_type() != object::elf::STT_FUNC {
            continue;
        }
        let Ok(name) = sym.name() else { continue };
        let entry = (sym.index().0, name.to_string());
        if raw.st_other() & STO_CUDA_ENTRY != 0 {
            entries.push(entry.clone());
        }
        functions.push(entry);
    }
    Ok(if entries.is_empty() {
        functions
    } else {
        entries
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_substrings_and_patterns() {
        let cutlass = "_ZN7cutlass13device_kernelIN4cute4SM90EEEvNT_6ParamsE";
        let f = KernelFilter::new("device_kernel").unwrap();
        assert!(f.matches(cutlass));
        assert!(
            KernelFilter::new("SM90").unwrap().matches(cutlass),
            "template arguments"
        );
        assert!(
            KernelFilter::new("^copy_.*16$")
                .unwrap()
                .matches("copy_cpasync16")
        );
        assert!(
            !KernelFilter::new("^copy_.*8$")
                .unwrap()
                .matches("copy_cpasync16")
        );
        // not a valid pattern: a literal substring
        assert!(
            KernelFilter::new("kernel<(")
                .unwrap()
                .matches("a_kernel<(b")
        );
        assert!(KernelFilter::new(" ").is_err());
    }
}
