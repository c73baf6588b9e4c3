//! Whether a `.cu` can hold a kernel at all, read before anything is compiled: when neither the
//! file nor any header it includes spells `__global__`, there is nothing to judge, and inspect
//! says so before it looks for a GPU to take the architecture from. Headers are found as NVRTC
//! finds them (the including file's folder, then the given folders); one that cannot be found
//! counts as one that may declare a kernel, so a source is refused only when it surely has none.

use regex::Regex;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

static INCLUDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^\s*#\s*include\s*[<"]([^>"]+)[>"]"#).expect("a valid pattern")
});

/// Whether `text` (the `.cu` at `path`), or a header it includes from `dirs` or its own folder,
/// may declare a kernel.
pub fn may_declare_kernel(path: &Path, text: &str, dirs: &[PathBuf]) -> bool {
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut todo: Vec<(PathBuf, String)> = vec![(path.to_path_buf(), text.to_string())];
    while let Some((file, text)) = todo.pop() {
        if text.contains("__global__") {
            return true;
        }
        let here = file.parent().map(Path::to_path_buf);
        for name in INCLUDE.captures_iter(&text).map(|c| c[1].to_string()) {
            let found = here
                .iter()
                .chain(dirs)
                .map(|d| d.join(&name))
                .find(|p| p.is_file());
            let Some(header) = found else {
                return true;
            };
            if seen.insert(header.canonicalize().unwrap_or(header.clone())) {
                match std::fs::read_to_string(&header) {
                    Ok(t) => todo.push((header, t)),
                    Err(_) => return true,
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_in_the_file_or_any_header_it_includes_counts() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let cu = d.join("k.cu");
        std::fs::create_dir_all(d.join("inc/deep")).unwrap();
        std::fs::write(d.join("host.h"), "int twice(int x);\n").unwrap();
        std::fs::write(d.join("inc/macro.h"), "#include \"deep/k.h\"\n").unwrap();
        std::fs::write(d.join("inc/deep/k.h"), "#define KERNEL __global__\n").unwrap();
        std::fs::write(d.join("loop.h"), "#include \"loop.h\"\n").unwrap();
        let dirs = [d.join("inc")];
        let may = |text: &str| may_declare_kernel(&cu, text, &dirs);
        assert!(!may(""));
        assert!(!may("int twice(int x) { return 2 * x; }\n"));
        assert!(!may("#include \"host.h\"\n#include \"loop.h\"\n"));
        assert!(may("__global__ void k() {}\n"));
        assert!(
            may("#include <macro.h>\nKERNEL void k() {}\n"),
            "through -I, twice"
        );
        assert!(
            may("#include <cuda/pipeline>\n"),
            "a header not found may hold one"
        );
    }
}
