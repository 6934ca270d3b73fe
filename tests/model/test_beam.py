"""Known answers for ``capdesk.model.beam.beam_search`` on a hand-made decoder whose every probability is known.

The decoder is a tree of word probabilities; its state ``h`` holds the node a hypothesis has
reached, and its attention is a one-hot vector on that node, so the attention kept for each word
says which node the word was chosen at.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from capdesk.model.beam import beam_finalists, beam_search
from capdesk.model.decoders import ArrayDecoder

START, END, A, B, C, D = range(6)
V = 6
TINY = 1e-12  # every word not in a node's table

# node -> {word: (probability, next node)}. Greedy takes A (0.6) and then can only reach 0.6 * 0.4;
# B (0.4) is followed by C with 0.9, so the best caption overall is "B C" (0.36 against 0.24).
TREE = {
    0: {A: (0.6, 1), B: (0.4, 2)},
    1: {C: (0.4, 3), D: (0.3, 4), END: (0.3, 5)},
    2: {C: (0.9, 6), END: (0.1, 5)},
    3: {END: (1.0, 5)},
    4: {END: (1.0, 5)},
    5: {},
    6: {END: (1.0, 5)},
}
# A second picture whose greedy path is also its best: "D" then the end.
TREE_2 = {0: {D: (0.9, 1), C: (0.1, 2)}, 1: {END: (1.0, 3)}, 2: {END: (1.0, 3)}, 3: {}}
NODES = 8
SINK = NODES - 1  # where a word no table allows leads: every word is unlikely there


def make_step(trees: list[dict]):
    """A step function over the trees (one per picture); ``calls`` records how many rows each call got."""
    calls = []

    def step(words, h, c, rows):
        calls.append(len(words))
        logp = np.full((len(words), V), math.log(TINY))
        new_h = h.copy()
        alpha = np.zeros((len(words), NODES), np.float32)
        for r, (w, node, image) in enumerate(zip(words, h[:, 0].astype(int), rows)):
            tree = trees[image]
            if w != START:  # h holds the node the word was chosen at: move on to where it leads
                # (rows of beams that are no longer alive carry <end>: they go to a sink)
                node = tree.get(node, {}).get(w, (0.0, SINK))[1]
            new_h[r, 0] = node
            alpha[r, node] = 1.0
            for word, (prob, _) in tree.get(node, {}).items():
                logp[r, word] = math.log(prob)
        return logp, new_h, c, alpha

    return step, calls


def tree_decoder(step) -> ArrayDecoder:
    """The step function as a decoder whose features are the start node of each picture (h0)."""
    return ArrayDecoder(lambda h0: (h0, np.zeros((len(h0), 1))), step)


def run(trees: list[dict], beam: int, max_len: int = 5, length_alpha: float = 0.0):
    step, calls = make_step(trees)
    n = len(trees)
    h0 = np.zeros((n, 1))  # every picture starts at node 0
    hyps = beam_search(tree_decoder(step), h0, beam, max_len, START, END, length_alpha, banned=(START,))
    return hyps, calls


def test_greedy_and_beam_two_give_different_known_captions():
    (greedy,), _ = run([TREE], beam=1)
    (wide,), _ = run([TREE], beam=2)
    assert greedy.ids == [A, C] and greedy.finished
    assert np.allclose(np.exp(greedy.logprobs), [0.6, 0.4, 1.0])
    assert greedy.score == pytest.approx(math.log(0.24))
    assert wide.ids == [B, C] and wide.finished
    assert np.allclose(np.exp(wide.logprobs), [0.4, 0.9, 1.0])
    assert wide.score == pytest.approx(math.log(0.36))
    # The attention kept for each word is the one of the step that chose it: A at the root, C after A.
    assert greedy.alphas.shape == (2, NODES)
    assert greedy.alphas.argmax(1).tolist() == [0, 1]
    assert wide.alphas.argmax(1).tolist() == [0, 2]


def test_width_is_the_number_of_hypotheses_each_step_advances():
    _, calls1 = run([TREE], beam=1)
    _, calls3 = run([TREE, TREE_2], beam=3)
    assert calls1 == [1, 1, 1]  # one hypothesis, three tokens: A, C, <end>
    assert set(calls3) == {6}  # two pictures, three beams each, one call per step for all of them


def test_pictures_in_one_call_are_decoded_apart():
    hyps, _ = run([TREE, TREE_2, TREE], beam=2)
    assert [h.ids for h in hyps] == [[B, C], [D], [B, C]]
    assert np.allclose(np.exp(hyps[1].logprobs), [0.9, 1.0])


def test_length_limit_and_normalisation():
    (cut,), _ = run([TREE], beam=1, max_len=1)
    assert cut.ids == [A] and not cut.finished  # stopped by the limit, not by <end>
    (norm,), _ = run([TREE], beam=2, length_alpha=1.0)
    assert norm.ids == [B, C]
    assert norm.score == pytest.approx(math.log(0.36) / 3)  # three tokens: B, C, <end>


def test_no_empty_caption_and_no_word_after_itself():
    # A root where <end> and a repeated word are the likeliest choices: neither may be taken.
    tree = {0: {END: (0.7, 1), A: (0.3, 2)}, 1: {}, 2: {A: (0.8, 2), END: (0.2, 1)}}
    (h,), _ = run([tree], beam=1)
    assert h.ids == [A] and h.finished and np.exp(h.logprobs[-1]) == pytest.approx(0.2)


def test_finalists_are_every_finished_caption_best_first():
    step, _ = make_step([TREE])
    (pool,) = beam_finalists(tree_decoder(step), np.zeros((1, 1)), 3, 5, START, END, 0.0, banned=(START,))
    # Width 3 finishes three captions: "B C" (0.36), "A C" (0.24), then one of the two ways of 0.18
    # ("A" then the end, or "A D").
    assert [h.ids for h in pool[:2]] == [[B, C], [A, C]]
    assert pool[2].ids in ([A], [A, D])
    assert [h.score for h in pool] == pytest.approx([math.log(0.36), math.log(0.24), math.log(0.18)])
    (best,), _ = run([TREE], beam=3)
    assert best.ids == pool[0].ids and best.score == pool[0].score
