//! [`SplitMix64`]: the small seeded pseudo-random generator k8s-mini uses wherever upstream draws
//! random numbers (random tie-breaks, the trace replay's shuffles and samples, the Random score
//! policy). Same seed, same sequence, on every platform: never seeded from the clock.
//!
//! The algorithm is Steele, Lea and Flood's SplitMix64 ("Fast Splittable Pseudorandom Number
//! Generators", OOPSLA 2014), the generator Java's `SplittableRandom` and the xoshiro authors use
//! for seeding. Go's `math/rand` (used by the FGD paper's simulator and by kube-scheduler's
//! `selectHost`) is a different generator, so runs agree with them in distribution, not draw by draw.

/// A seeded SplitMix64 generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (0 when `n` is 0), without modulo bias (rejection sampling).
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let n64 = n as u64;
        let zone = u64::MAX - (u64::MAX % n64);
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % n64) as usize;
            }
        }
    }

    /// Shuffles `items` in place (Fisher-Yates, as Go's `rand.Shuffle`: from the last element down).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_outputs_match_the_reference_algorithm() {
        // Reference values of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn below_and_shuffle_are_in_range_and_reproducible() {
        let mut a = SplitMix64::new(42);
        let mut b = SplitMix64::new(42);
        for n in 1..50 {
            let x = a.below(n);
            assert!(x < n);
            assert_eq!(x, b.below(n));
        }
        let mut v: Vec<u32> = (0..10).collect();
        SplitMix64::new(7).shuffle(&mut v);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        let mut w: Vec<u32> = (0..10).collect();
        SplitMix64::new(7).shuffle(&mut w);
        assert_eq!(v, w);
    }
}
