"""The suite's claim-* seeding: the seed catalogue (seeds.json), libcst mutations, test runs on copies."""
