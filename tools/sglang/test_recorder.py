# SPDX-License-Identifier: Apache-2.0
"""Tests of the torch-free conversion (recorder.py) on dumps written out by hand in SGLang's layout:
    python3 -m unittest discover -s tools/sglang -p 'test_*.py'
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import recorder  # noqa: E402

# 3 hidden layers (layer 0 dense), 4 logical experts, 6 physical slots: slots 4, 5 replicate experts 0, 3.
P2L = [[0, 1, 2, 3, 0, 1], [0, 1, 2, 3, 0, 3], [0, 1, 2, 3, 0, 3]]


class StatTest(unittest.TestCase):
    def test_dense_rows_and_unfilled_slots_are_dropped(self):
        dump = {"rank": 0, "logical_count": [
            [[0, 0, 0, 0], [2, 1, 1, 0], [0, 2, 1, 1]],
            [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],  # an unfilled buffer slot
            [[0, 0, 0, 0], [1, 1, 1, 1], [4, 0, 0, 0]]]}
        self.assertEqual(recorder.mode_of(dump), "stat")
        entries, keep = recorder.stat_history(dump)
        self.assertEqual(keep, [1, 2])
        self.assertEqual(entries, [{"logical_expert_load": [[2, 1, 1, 0], [0, 2, 1, 1]]},
                                   {"logical_expert_load": [[1, 1, 1, 1], [4, 0, 0, 0]]}])

    def test_first_dense_overrides_detection(self):
        dump = {"logical_count": [[[0, 0, 0, 0], [2, 1, 1, 0], [0, 0, 0, 0]]]}
        entries, keep = recorder.stat_history(dump, first_dense=1)
        self.assertEqual(keep, [1, 2])
        self.assertEqual(entries[0]["logical_expert_load"][1], [0, 0, 0, 0])


class PerPassTest(unittest.TestCase):
    def test_ranks_summed_and_slots_mapped_to_experts(self):
        rank0 = {"last_physical_to_logical_map": P2L, "records": [
            {"forward_pass_id": 7, "rank": 0, "global_physical_count": [[0] * 6, [1, 0, 0, 0, 1, 2], [0] * 6]}]}
        rank1 = {"last_physical_to_logical_map": P2L, "records": [
            {"forward_pass_id": 7, "rank": 1, "global_physical_count": [[0] * 6, [0, 1, 1, 0, 0, 0], [3, 0, 0, 0, 1, 0]]},
            {"forward_pass_id": 8, "rank": 1, "global_physical_count": [[0] * 6, [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 1]]}]}
        self.assertEqual(recorder.mode_of(rank0), "per_pass")
        entries, keep = recorder.per_pass_history([rank0, rank1])
        self.assertEqual(keep, [1, 2])
        # pass 7, layer 1: slot 0 (e0) 1 + slot 4 (e0) 1 -> e0 = 2; slot 5 (e3) 2 -> e3 = 2; slots 1, 2 -> e1, e2.
        self.assertEqual(entries[0]["logical_expert_load"], [[2, 1, 1, 2], [4, 0, 0, 0]])
        self.assertEqual(entries[1]["logical_expert_load"], [[0, 0, 0, 1], [0, 0, 0, 1]])


class PerTokenTest(unittest.TestCase):
    def test_padding_dropped_and_ids_made_logical(self):
        # [layers][tokens][8]: top-2 in the first two columns, the rest -1; token 2 is padding.
        def tok(a, b):
            return [a, b] + [-1] * 6
        pad = [-1] * 8
        ids = [[pad, pad, pad], [tok(0, 5), tok(4, 1), pad], [tok(5, 2), tok(1, 0), pad]]
        dump = {"last_physical_to_logical_map": P2L,
                "records": [{"forward_pass_id": 3, "rank": 0, "topk_ids_of_layer": ids}]}
        self.assertEqual(recorder.mode_of(dump), "per_token")
        lines, keep = recorder.per_token_lines([dump], top_k=2)
        self.assertEqual(keep, [1, 2])
        self.assertEqual(len(lines), 1)
        # slot 5 -> expert 3, slot 4 -> expert 0 in layers 1 and 2.
        self.assertEqual(json.loads(lines[0]), {"routed_experts": [[[0, 3], [3, 2]], [[0, 1], [1, 0]]]})

    def test_a_token_routed_on_some_layers_only_is_refused(self):
        ids = [[[-1] * 8], [[0, 1] + [-1] * 6], [[-1] * 8]]
        dump = {"last_physical_to_logical_map": P2L,
                "records": [{"forward_pass_id": 0, "rank": 0, "topk_ids_of_layer": ids}]}
        with self.assertRaises(ValueError):
            recorder.per_token_lines([dump], top_k=2, first_dense=1)

    def test_not_a_dump(self):
        with self.assertRaises(ValueError):
            recorder.mode_of({"weights": []})


if __name__ == "__main__":
    unittest.main()
