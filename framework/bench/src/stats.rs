//! Medians, quartiles and the paired comparison of wall-clock times.

use serde::Serialize;

/// The value at fraction `q` (0..=1) of sorted `values`, interpolating linearly between ranks.
/// `None` for no values.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let last = sorted.len().checked_sub(1)?;
    let rank = q.clamp(0.0, 1.0) * last as f64;
    let below = rank.floor() as usize;
    let above = rank.ceil() as usize;
    let weight = rank - below as f64;
    Some(sorted[below] * (1.0 - weight) + sorted[above] * weight)
}

/// One interleaved pair: the time of A (rpt's binary) and of B (the peer), in seconds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Pair {
    /// Whether A ran first in this pair (pairs alternate, so order effects cancel).
    pub a_first: bool,
    /// A's wall time.
    pub a_seconds: f64,
    /// B's wall time.
    pub b_seconds: f64,
}

/// The summary of a set of pairs: ratios A ÷ B.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PairSummary {
    /// Pairs timed.
    pub pairs: usize,
    /// The median of A ÷ B.
    pub median_ratio: f64,
    /// The first quartile of A ÷ B.
    pub q1_ratio: f64,
    /// The third quartile of A ÷ B.
    pub q3_ratio: f64,
    /// Pairs in which A was faster.
    pub a_faster: usize,
    /// Pairs in which B was faster (ties count for neither).
    pub b_faster: usize,
}

impl PairSummary {
    /// Summarises pairs; `None` when there are none or a time is not positive.
    pub fn of(pairs: &[Pair]) -> Option<PairSummary> {
        if pairs.iter().any(|p| !(p.a_seconds > 0.0 && p.b_seconds > 0.0)) {
            return None;
        }
        let ratios: Vec<f64> = pairs.iter().map(|p| p.a_seconds / p.b_seconds).collect();
        Some(PairSummary {
            pairs: pairs.len(),
            median_ratio: quantile(&ratios, 0.5)?,
            q1_ratio: quantile(&ratios, 0.25)?,
            q3_ratio: quantile(&ratios, 0.75)?,
            a_faster: pairs.iter().filter(|p| p.a_seconds < p.b_seconds).count(),
            b_faster: pairs.iter().filter(|p| p.b_seconds < p.a_seconds).count(),
        })
    }

    /// The interquartile range as a fraction of the median.
    pub fn relative_spread(&self) -> f64 {
        (self.q3_ratio - self.q1_ratio) / self.median_ratio
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_ranks() {
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[3.0], 0.25), Some(3.0));
        assert_eq!(quantile(&[4.0, 1.0, 3.0, 2.0], 0.5), Some(2.5));
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25), Some(2.0));
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.75), Some(4.0));
    }

    #[test]
    fn pair_summary_counts_each_side() {
        let pair = |a, b| Pair {
            a_first: true,
            a_seconds: a,
            b_seconds: b,
        };
        let s = PairSummary::of(&[pair(1.0, 2.0), pair(1.0, 4.0), pair(3.0, 2.0), pair(1.0, 1.0)]).unwrap();
        assert_eq!((s.pairs, s.a_faster, s.b_faster), (4, 2, 1));
        assert_eq!(s.median_ratio, 0.75);
        assert!(PairSummary::of(&[pair(0.0, 1.0)]).is_none());
        assert!(PairSummary::of(&[]).is_none());
    }
}
