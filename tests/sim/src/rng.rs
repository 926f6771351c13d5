//! SplitMix64: a small, seedable generator, so that fault injection and simulated clients
//! are reproducible from a seed without a dependency.

#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [0, n); 0 when n is 0.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// Fisher-Yates.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn the_generator_spreads_and_repeats() {
        let mut a = Rng(1);
        let mut b = Rng(1);
        let xs: Vec<usize> = (0..100).map(|_| a.below(3)).collect();
        assert_eq!(xs, (0..100).map(|_| b.below(3)).collect::<Vec<_>>());
        for k in 0..3 {
            assert!(xs.iter().filter(|x| **x == k).count() > 15);
        }
        assert!(
            (0..100)
                .map(|_| a.next_f64())
                .all(|f| (0.0..1.0).contains(&f))
        );
    }
}
