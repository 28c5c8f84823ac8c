//! Text for messages, shared by every layer: names from files made safe to
//! print (a message stays one line and cannot repaint a terminal, whatever
//! a file calls its nodes) and byte counts for people. Knows nothing of any
//! other module.

/// Longest name printed whole, in characters; longer ones end in `…`.
pub const MAX_NAME_CHARS: usize = 64;

/// `text` with control characters escaped as Rust writes them (`\n`, `\t`,
/// `\u{1b}`), every other character as it is. Escaping twice changes
/// nothing more, so a message may be escaped again as a whole.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// A name for a message: escaped, and shortened to [`MAX_NAME_CHARS`]
/// characters as printed (the last one `…`) when longer, so a name of
/// control characters is no longer on screen than any other.
pub fn display_name(name: &str) -> String {
    let escaped = escape(name);
    if escaped.chars().count() <= MAX_NAME_CHARS {
        return escaped;
    }
    let mut short: String = escaped.chars().take(MAX_NAME_CHARS - 1).collect();
    short.push('…');
    short
}

/// `kind index "name"`, or `kind index` when unnamed (the name shortened and escaped).
pub fn label(kind: &str, index: usize, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("{kind} {index} \"{}\"", display_name(n)),
        None => format!("{kind} {index}"),
    }
}

/// A measurement with three significant digits or more: 1.23, 12.3, 123,
/// 12345 (how the bench's table, its verdicts and the renderer's
/// messages write them).
pub fn significant(value: f64) -> String {
    let decimals = match value.abs() {
        v if v < 10.0 => 2,
        v if v < 100.0 => 1,
        _ => 0,
    };
    format!("{value:.decimals$}")
}

/// Bytes for people: `512 B`, `1.5 MiB`, `8.0 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{value:.1} {}", UNITS[unit]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape("a\nb\u{1b}[2Jc\t"), "a\\nb\\u{1b}[2Jc\\t");
        assert_eq!(escape(&escape("a\nb")), escape("a\nb"));
        assert_eq!(escape("Hüfte ✓"), "Hüfte ✓");
        assert_eq!(label("node", 3, Some("x\ny")), "node 3 \"x\\ny\"");
        assert_eq!(label("node", 3, None), "node 3");
    }

    #[test]
    fn bytes_for_people() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(8 << 30), "8.0 GiB");
    }

    #[test]
    fn long_names_are_shortened() {
        let long = "é".repeat(1000);
        let short = display_name(&long);
        assert_eq!(short.chars().count(), MAX_NAME_CHARS);
        assert!(short.ends_with('…'));
        assert_eq!(display_name(&"a".repeat(MAX_NAME_CHARS)), "a".repeat(MAX_NAME_CHARS));
        // Escapes count as printed.
        assert_eq!(display_name(&"\n".repeat(MAX_NAME_CHARS)).chars().count(), MAX_NAME_CHARS);
    }
}
