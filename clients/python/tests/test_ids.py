"""Ids and names by the C++ library's rules (lib/src/job_id.cpp, keyspace.cpp)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from echomq import ids  # noqa: E402
from echomq.errors import InvalidError, KindError  # noqa: E402


class Ids(unittest.TestCase):
    # Minting with a given time moves the process's minter: keep other
    # tests' ids at the real time.
    def setUp(self):
        self.saved = (ids._last_ms, ids._rand)

    def tearDown(self):
        ids._last_ms, ids._rand = self.saved

    def test_a_minted_id_is_job_and_a_26_digit_ulid_of_now(self):
        i = ids.mint_job_id(2_100_000_000_123)
        self.assertRegex(i, r"^JOB_[0-9A-HJKMNP-TV-Z]{26}$")
        self.assertEqual(ids.minted_at_ms(i), 2_100_000_000_123)
        self.assertTrue(ids.valid_job_id(i))

    def test_the_time_is_the_first_ten_digits_as_the_cpp_minter_writes_them(self):
        # 2^47 ms is binary 1 then 47 zeros: with the two leading zero bits of
        # 130, the first digit holds bits 0-2 = 0b001 followed by zeros.
        self.assertTrue(ids.mint_job_id(1 << 47).startswith("JOB_4000000000"))

    def test_ids_within_one_millisecond_and_backwards_sort_in_mint_order(self):
        minted = [ids.mint_job_id(2_000_000_000_000) for _ in range(1000)]
        minted.append(ids.mint_job_id(1_999_999_999_000))  # the clock stepped back
        self.assertEqual(minted, sorted(minted))
        self.assertEqual(len(set(minted)), len(minted))

    def test_the_job_id_rules(self):
        for good in ("JOB_a", "JOB_" + "x" * 128, "JOB_01JD3Z8X5W6Q7R8S9T0V1W2X3Y", "JOB_a.b:c-d_e"):
            self.assertTrue(ids.valid_job_id(good), good)
        for bad in ("JOB_", "JOB_" + "x" * 129, "JOB_a b", "JOB_{x}", "JOBa", "job_a", "JOB_é"):
            self.assertFalse(ids.valid_job_id(bad), bad)
        with self.assertRaisesRegex(KindError, "^EMQKIND"):
            ids.check_job_id("task_1")
        with self.assertRaisesRegex(InvalidError, "not a valid job id"):
            ids.check_job_id("JOB_a b")

    def test_the_queue_name_rules(self):
        for good in ("q", "a" * 64, "emails.v2-x_y"):
            self.assertTrue(ids.valid_queue_name(good), good)
        for bad in ("", "a" * 65, "a:b", "{a}", "a b", "é"):
            self.assertFalse(ids.valid_queue_name(bad), bad)
        with self.assertRaisesRegex(InvalidError, "not a valid queue name"):
            ids.check_queue_name("a:b")


if __name__ == "__main__":
    unittest.main()
