"""Test data the benchmarks share."""
import os, random


def small_files(root, count, folders, seed, name_digits=5, folder_digits=3):
    """Writes `count` files of 4 KB of seeded random bytes under `root`, spread over `folders`
    folders (`d000/f00000.bin`, …): the many-small-files corpus."""
    rng = random.Random(seed)
    for i in range(count):
        folder = os.path.join(root, f"d{i % folders:0{folder_digits}d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"f{i:0{name_digits}d}.bin"), "wb") as f:
            f.write(rng.randbytes(4096))
