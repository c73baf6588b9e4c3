//! Kernel names as a reader sees them: the short name (`ns::kernel`), the full demangled one
//! with its template arguments (where CUTLASS and CuTe say which copy and MMA atoms they use),
//! and the words of an identifier.

/// A readable name from an Itanium-mangled one: `_Z10stage_rowsPKtPti` -> `stage_rows`,
/// `_ZN2ns6kernelILi4EEEvPf` -> `ns::kernel`; anything else unchanged. Only the names are read,
/// not the parameter or template types.
pub fn display_name(name: &str) -> String {
    let Some(rest) = name.strip_prefix("_Z") else {
        return name.to_string();
    };
    let rest = rest.strip_prefix('L').unwrap_or(rest);
    let (nested, mut s) = match rest.strip_prefix('N') {
        Some(r) => (true, r.trim_start_matches(['K', 'V', 'r'])),
        None => (false, rest),
    };
    let mut parts: Vec<&str> = Vec::new();
    loop {
        let digits = s.chars().take_while(char::is_ascii_digit).count();
        let Some(len) = s[..digits].parse::<usize>().ok() else {
            break;
        };
        let Some(id) = s.get(digits..digits + len) else {
            break;
        };
        parts.push(id);
        s = &s[digits + len..];
        if !nested {
            break;
        }
    }
    if parts.is_empty() {
        name.to_string()
    } else {
        parts.join("::")
    }
}

/// The demangled name with its template arguments and without its parameters, or None when
/// the symbol is not an Itanium C++ name.
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let options = cpp_demangle::DemangleOptions::new()
        .no_params()
        .no_return_type();
    cpp_demangle::Symbol::new(name.as_bytes())
        .ok()?
        .demangle_with_options(&options)
        .ok()
}

/// The words of an identifier: `copyAsyncLargeChunk` -> copy, async, large, chunk;
/// `TMALoad_v2` -> tma, load, v, 2.
pub fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            out.extend((!cur.is_empty()).then(|| std::mem::take(&mut cur)));
            continue;
        }
        if let Some(p) = cur.chars().last() {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let split = (p.is_ascii_lowercase() && c.is_ascii_uppercase())
                || (p.is_ascii_digit() != c.is_ascii_digit())
                || (p.is_ascii_uppercase() && c.is_ascii_uppercase() && next_lower);
            if split {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    out.extend((!cur.is_empty()).then_some(cur));
    out.into_iter().map(|w| w.to_ascii_lowercase()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mangled_names_read() {
        assert_eq!(display_name("_Z10stage_rowsPKtPti"), "stage_rows");
        assert_eq!(display_name("_ZN2ns6kernelILi4EEEvPf"), "ns::kernel");
        assert_eq!(display_name("_ZL5localv"), "local");
        assert_eq!(display_name("plain_c_name"), "plain_c_name");
        assert_eq!(display_name("_Zbroken"), "_Zbroken");
        assert_eq!(
            demangle("_ZN2ns6kernelILi4EEEvPf").as_deref(),
            Some("ns::kernel<4>")
        );
        assert_eq!(demangle("plain_c_name"), None);
    }

    #[test]
    fn names_are_read_in_words() {
        assert_eq!(
            words("copyAsyncLargeChunk"),
            ["copy", "async", "large", "chunk"]
        );
        assert_eq!(words("TMALoad_v2"), ["tma", "load", "v", "2"]);
    }
}
