"""The shared wire cases, spoken by this package against a real valkey-server."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import wire_cases  # noqa: E402
from echomq.connect import handshake  # noqa: E402
from echomq.scripts import names  # noqa: E402
from server import WIRE_CASES, Server  # noqa: E402


class WireCases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.r = cls.server.client()
        handshake(cls.r)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_every_script_has_cases_and_every_file_is_a_script(self):
        files = set(wire_cases.load_cases(WIRE_CASES))
        self.assertEqual(files, set(names()))

    def test_every_case_holds(self):
        count = 0
        for script, cases in wire_cases.load_cases(WIRE_CASES).items():
            for case in cases:
                with self.subTest(script=script, case=case["name"]):
                    self.assertEqual(case["call"]["script"], script)
                    self.assertEqual(wire_cases.run_case(self.r, case), [])
                count += 1
        self.assertGreater(count, 0)


if __name__ == "__main__":
    unittest.main()
