//! The one process-wide setting a database asks of the C allocator when it opens: under glibc,
//! a fixed mmap threshold, so a large buffer a flush or a compaction frees (an SSTable's filter
//! and index, a writer's growing index) goes straight back to the system instead of leaving a
//! hole in the heap. Nothing else here; `Options::tune_malloc = false` leaves malloc alone.
//!
//! Why: glibc raises its threshold to the size of each mmapped block freed (up to 32 MiB), so
//! after the first SSTable is dropped, buffers of several MiB come from the heap and their
//! holes stay in the process. A 10,000,000-row load peaked at 367 MiB with glibc's defaults and
//! at 285 MiB with the threshold fixed at its starting value.

#![expect(
    unsafe_code,
    reason = "mallopt is the only way to set glibc's mmap threshold"
)]

/// glibc's own starting threshold, kept from moving.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 128 * 1024;

/// Fixes glibc's mmap threshold, once per process; elsewhere does nothing.
pub(super) fn fix_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: `mallopt` only sets a malloc parameter, may be called from any thread at
            // any time, and M_MMAP_THRESHOLD accepts any value up to HEAP_MAX/2 (32 MiB on
            // 64-bit), which 128 KiB is far below. Its return value (1 on success) is only
            // advice lost when 0.
            let ok = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) };
            if ok != 1 {
                tracing::warn!("malloc refused a fixed mmap threshold; memory may stay higher");
            }
        });
    }
}
