//! Reading the files a model names: only regular files (a FIFO, a device, a
//! directory or a socket is an error, never a hang: `crate::input_file`),
//! never more bytes than declared, and only inside the model's folder
//! unless allowed.

use super::error::AssetError;
use crate::input_file::{self, InputError};
use std::fs::File;
use std::path::{Component, Path, PathBuf};

/// Opens `path` for reading if it is a regular file (see
/// `crate::input_file::open_regular`); returns it with its length.
fn open_regular(what: &str, path: &Path) -> Result<(File, u64), AssetError> {
    input_file::open_regular(path).map_err(|e| match e {
        InputError::NotRegular(kind) => {
            AssetError::NotRegularFile { what: what.to_string(), path: path.to_path_buf(), kind }
        }
        InputError::Io(source) => AssetError::Io { what: what.to_string(), path: path.to_path_buf(), source },
        // Opening neither measures nor decodes.
        other => AssetError::Io {
            what: what.to_string(),
            path: path.to_path_buf(),
            source: std::io::Error::other(other),
        },
    })
}

/// Reads at most `len` bytes from `file` (its size said `size`).
fn read_up_to(what: &str, path: &Path, file: File, len: u64, size: u64) -> Result<Vec<u8>, AssetError> {
    input_file::read_up_to(file, len, size).map_err(|source| AssetError::Io {
        what: what.to_string(),
        path: path.to_path_buf(),
        source,
    })
}

/// Reads the regular file `path` whole, once `check` has accepted its size.
pub fn read_file(
    what: &str,
    path: &Path,
    check: impl FnOnce(u64) -> Result<(), AssetError>,
) -> Result<Vec<u8>, AssetError> {
    let (file, size) = open_regular(what, path)?;
    check(size)?;
    read_up_to(what, path, file, size, size)
}

/// Reads the first `len` bytes of the regular file `path` (a buffer's
/// byteLength): an error when it has fewer, never more read.
pub fn read_prefix(what: &str, path: &Path, len: u64) -> Result<Vec<u8>, AssetError> {
    let (file, size) = open_regular(what, path)?;
    let short =
        |got: u64| super::error::invalid!("{what}: byteLength is {len} but the data has only {got} bytes");
    if size < len {
        return Err(short(size));
    }
    let data = read_up_to(what, path, file, len, size)?;
    if (data.len() as u64) < len {
        return Err(short(data.len() as u64));
    }
    Ok(data)
}

/// The file a buffer or image `uri` (not a `data:` URI) names, relative to
/// the model's folder `base_dir`. Unless `allow_outside`, it must stay inside
/// that folder: absolute paths, `file:` URIs and `..` leading out (also
/// percent-encoded) are refused. Other schemes (`http:` ...) are never read.
pub fn resolve_uri(
    what: &str,
    uri: &str,
    base_dir: &Path,
    allow_outside: bool,
) -> Result<PathBuf, AssetError> {
    let refuse = |reason| AssetError::Uri { what: what.to_string(), uri: uri.to_string(), reason };
    let relative = match scheme(uri) {
        Some(s) if s.eq_ignore_ascii_case("file") => {
            if !allow_outside {
                return Err(refuse(
                    "is a file: URI, which may name any file (--allow-outside-uris allows it)",
                ));
            }
            // file:///abs/path, file://localhost/abs/path or file:path.
            let rest = &uri[s.len() + 1..];
            match rest.strip_prefix("//") {
                Some(host_path) => &host_path[host_path.find('/').unwrap_or(host_path.len())..],
                None => rest,
            }
        }
        Some(_) => return Err(refuse("names no local file (only relative paths and data: URIs are read)")),
        None => uri,
    };
    let decoded = percent_decode(relative);
    if decoded.contains('\0') {
        return Err(refuse("contains a NUL character"));
    }
    let path = Path::new(&decoded);
    if !allow_outside {
        let mut depth = 0usize;
        for component in path.components() {
            match component {
                Component::Prefix(_) | Component::RootDir => {
                    return Err(refuse(
                        "is an absolute path, outside the model's folder (--allow-outside-uris allows it)",
                    ));
                }
                Component::CurDir => {}
                Component::ParentDir if depth == 0 => {
                    return Err(refuse("leads outside the model's folder (--allow-outside-uris allows it)"));
                }
                Component::ParentDir => depth -= 1,
                Component::Normal(_) => depth += 1,
            }
        }
        let joined = base_dir.join(path);
        if !inside_when_resolved(&joined, base_dir) {
            return Err(refuse(
                "leads outside the model's folder through a symbolic link (--allow-outside-uris allows it)",
            ));
        }
        return Ok(joined);
    }
    Ok(base_dir.join(path))
}

/// Whether `path`, with every symbolic link resolved, lies inside `base_dir`
/// (also resolved): a link in the model's folder must not lead out of it.
/// A path that does not exist (yet) passes: opening it reports it missing.
fn inside_when_resolved(path: &Path, base_dir: &Path) -> bool {
    let base = if base_dir.as_os_str().is_empty() { Path::new(".") } else { base_dir };
    match (std::fs::canonicalize(path), std::fs::canonicalize(base)) {
        (Ok(resolved), Ok(base)) => resolved.starts_with(base),
        _ => true,
    }
}

/// The scheme of a URI (`data`, `file`, `http`), when it has one (RFC 3986:
/// a letter, then letters, digits, `+`, `-` or `.`, then `:`).
fn scheme(uri: &str) -> Option<&str> {
    let end = uri.find(':')?;
    let s = &uri[..end];
    let mut chars = s.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(s)
}

/// Decodes `%XX` escapes of a relative URI (e.g. `%20` for a space); invalid
/// escapes are kept as written.
pub fn percent_decode(uri: &str) -> String {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(hex) = b.get(i + 1..i + 3)
            && let Ok(s) = std::str::from_utf8(hex)
            && let Ok(v) = u8::from_str_radix(s, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("my%20file%2Bx.bin"), "my file+x.bin");
        assert_eq!(percent_decode("bad%zz%2"), "bad%zz%2");
    }

    #[test]
    fn uris_stay_in_the_model_folder() {
        let base = Path::new("/models/fox");
        let ok = |uri: &str| resolve_uri("buffer 0", uri, base, false);
        assert_eq!(ok("Fox.bin").unwrap(), base.join("Fox.bin"));
        assert_eq!(ok("tex/a%20b.png").unwrap(), base.join("tex/a b.png"));
        assert_eq!(ok("tex/../Fox.bin").unwrap(), base.join("tex/../Fox.bin"));
        assert_eq!(ok("./x.bin").unwrap(), base.join("./x.bin"));
        for bad in [
            "../x.bin",
            "tex/../../x.bin",
            "%2e%2e/x.bin",
            "..%2Fx.bin",
            "/etc/passwd",
            "%2Fetc%2Fpasswd",
            "file:///etc/passwd",
            "FILE:x.bin",
            "http://example.com/x.bin",
            "x%00.bin",
        ] {
            let e = ok(bad).expect_err(bad).to_string();
            assert!(e.starts_with("buffer 0: uri \""), "{e}");
        }
        let allowed = |uri: &str| resolve_uri("image 1", uri, base, true).unwrap();
        assert_eq!(allowed("../x.bin"), base.join("../x.bin"));
        assert_eq!(allowed("/etc/passwd"), PathBuf::from("/etc/passwd"));
        assert_eq!(allowed("file:///etc/pass%20wd"), PathBuf::from("/etc/pass wd"));
        assert_eq!(allowed("file://localhost/etc/passwd"), PathBuf::from("/etc/passwd"));
        assert!(resolve_uri("b", "https://x/y", base, true).is_err());
    }

    #[test]
    fn symbolic_links_do_not_lead_out_of_the_model_folder() {
        let root = tempfile::tempdir().unwrap();
        let models = root.path().join("models");
        std::fs::create_dir_all(models.join("tex")).unwrap();
        std::fs::write(root.path().join("secret.bin"), b"secret").unwrap();
        std::fs::write(models.join("tex/a.png"), b"png").unwrap();
        let link = |target: &Path, name: &str| std::os::unix::fs::symlink(target, models.join(name)).unwrap();
        link(&root.path().join("secret.bin"), "out.bin");
        link(root.path(), "up");
        link(&models.join("tex/a.png"), "in.png");
        link(&models.join("tex"), "textures");
        let resolve = |uri: &str, allow| resolve_uri("buffer 0", uri, &models, allow);
        for bad in ["out.bin", "up/secret.bin", "./up/models/../secret.bin"] {
            let e = resolve(bad, false).expect_err(bad).to_string();
            assert!(e.contains("leads outside the model's folder through a symbolic link"), "{e}");
            assert_eq!(resolve(bad, true).unwrap(), models.join(bad));
        }
        // Links that stay inside, links reached through the folder itself and missing files pass.
        for good in ["in.png", "textures/a.png", "up/models/tex/a.png", "missing.bin"] {
            assert_eq!(resolve(good, false).unwrap(), models.join(good), "{good}");
        }
        let through = root.path().join("models-link");
        std::os::unix::fs::symlink(&models, &through).unwrap();
        assert!(resolve_uri("image 0", "in.png", &through, false).is_ok());
        assert!(resolve_uri("image 0", "out.bin", &through, false).is_err());
    }

    #[test]
    fn special_files_are_refused() {
        let e = read_file("file", Path::new("/dev/zero"), |_| Ok(())).unwrap_err().to_string();
        assert_eq!(e, "file: \"/dev/zero\" is a character device, not a regular file");
        let e = read_file("", Path::new("/dev/zero"), |_| Ok(())).unwrap_err().to_string();
        assert_eq!(e, "file is a character device, not a regular file");
        let e = read_prefix("buffer 0", Path::new("/"), 4).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let missing = read_file("file", Path::new("/nonexistent/x.glb"), |_| Ok(())).unwrap_err();
        assert!(matches!(missing, AssetError::Io { .. }));
    }

    #[test]
    fn reads_stop_at_the_declared_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.bin");
        std::fs::write(&path, [1u8, 2, 3, 4, 5]).unwrap();
        assert_eq!(read_prefix("buffer 0", &path, 3).unwrap(), vec![1, 2, 3]);
        let e = read_prefix("buffer 0", &path, 6).unwrap_err().to_string();
        assert_eq!(e, "buffer 0: byteLength is 6 but the data has only 5 bytes");
        // A symlink to a regular file is followed.
        let link = dir.path().join("l.bin");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(read_file("file", &link, |_| Ok(())).unwrap().len(), 5);
    }
}
