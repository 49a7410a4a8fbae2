//! The project's one file checksum: 64-bit FNV-1a (the `fnv` crate), used by checkpoints
//! (`meta.json`), the trainer's replay buffer and the endgame table files.

use std::hash::Hasher;

/// The 64-bit FNV-1a hash of `data`. Every single-byte change changes it (each step is a
/// bijection). Not cryptographic: it catches damage, not tampering.
pub fn checksum(data: &[u8]) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(data);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_and_single_byte_changes() {
        // FNV-1a 64 of the empty input is its offset basis; of "a", the published value.
        assert_eq!(checksum(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(checksum(b"a"), 0xaf63_dc4c_8601_ec8c);
        let data = vec![7u8; 256];
        for i in 0..data.len() {
            let mut d = data.clone();
            d[i] ^= 1;
            assert_ne!(checksum(&d), checksum(&data), "byte {i}");
        }
    }
}
