//! What `stress` reads off the process and the file system, the same way for every engine: peak
//! resident memory, bytes handed to `write(2)` (the numerator of write amplification), and the
//! bytes a data directory holds.

use std::path::Path;

/// Peak resident set size of this process (VmHWM), in bytes; 0 where /proc does not say.
pub fn peak_memory() -> u64 {
    proc_field("/proc/self/status", "VmHWM:").map_or(0, |kb| kb * 1024)
}

/// Bytes this process has written so far: those passed to write-like system calls (`wchar` of
/// /proc/self/io), plus those supercolumn stored into its memory-mapped commit log, which no
/// system call sees. Counted as they are handed over, so it includes write-ahead logs, tables and
/// manifests alike, and does not depend on when the kernel writes pages back.
pub fn bytes_written() -> u64 {
    proc_field("/proc/self/io", "wchar:").unwrap_or(0) + mapped_bytes()
}

#[cfg(target_os = "linux")]
fn mapped_bytes() -> u64 {
    supercolumn::io::mapped_bytes_written()
}

#[cfg(not(target_os = "linux"))]
fn mapped_bytes() -> u64 {
    0
}

fn proc_field(file: &str, name: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Bytes of every file under `dir`.
pub fn disk_usage(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_counted_and_disk_usage_sums_files() {
        let dir = tempfile::tempdir().unwrap();
        let before = bytes_written();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("a"), [0u8; 1000]).unwrap();
        std::fs::write(dir.path().join("sub/b"), [0u8; 24]).unwrap();
        assert!(bytes_written() >= before + 1024);
        assert_eq!(disk_usage(dir.path()), 1024);
        assert!(peak_memory() > 0);
    }
}
