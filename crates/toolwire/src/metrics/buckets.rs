//! The latency histogram's fixed buckets.

/// Upper bounds of the latency histogram buckets in milliseconds, inclusive. A last,
/// implicit `+Inf` bucket follows them.
///
/// ```
/// assert_eq!(toolwire::metrics::BUCKET_BOUNDS_MS.len(), 19);
/// assert_eq!(toolwire::metrics::BUCKET_BOUNDS_MS[0], 0.05);
/// assert_eq!(toolwire::metrics::BUCKET_BOUNDS_MS[18], 60_000.0);
/// ```
pub const BUCKET_BOUNDS_MS: [f64; 19] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0,
    5000.0, 10000.0, 30000.0, 60000.0,
];

/// The `le` labels of the buckets in milliseconds (snapshot) and seconds
/// (Prometheus), written out so that no float formatting is involved.
pub(super) const BUCKET_LABELS_MS: [&str; 20] = [
    "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "25", "50", "100", "250", "500", "1000",
    "2500", "5000", "10000", "30000", "60000", "+Inf",
];
pub(super) const BUCKET_LABELS_S: [&str; 20] = [
    "0.00005", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
    "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "+Inf",
];
pub(super) const BUCKETS: usize = 20;

/// The index of the bucket `duration_ms` falls in (the last is `+Inf`).
pub(super) fn bucket_of(duration_ms: f64) -> usize {
    BUCKET_BOUNDS_MS
        .iter()
        .position(|&bound| duration_ms <= bound)
        .unwrap_or(BUCKETS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricsRecorder;

    #[test]
    fn bucket_tables_agree() {
        for (i, bound) in BUCKET_BOUNDS_MS.iter().enumerate() {
            assert_eq!(BUCKET_LABELS_MS[i].parse::<f64>().unwrap(), *bound);
            let seconds: f64 = BUCKET_LABELS_S[i].parse().unwrap();
            assert!((seconds * 1000.0 - bound).abs() < 1e-9 * bound);
        }
    }

    #[test]
    fn bucket_bounds_are_inclusive() {
        let m = MetricsRecorder::new();
        for ms in [0.0, 0.05, 0.050001, 60000.0, 60000.5, 1e12] {
            m.record("t", "success", None, ms).unwrap();
        }
        let counts: Vec<u64> = m.snapshot().tools[0]
            .duration
            .buckets
            .iter()
            .map(|b| b.count)
            .collect();
        assert_eq!(counts[0], 2);
        assert_eq!(counts[1], 3);
        assert_eq!(counts[18], 4);
        assert_eq!(counts[19], 6);
    }
}
