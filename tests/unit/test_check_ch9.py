"""The Chapter 9 self-checks accept a right answer and explain recognised wrong ones."""

import torch

from nqf_mini.course.check import CHECKS, exercise

from ..conftest import assert_feedback


def right_layerwise(layers, x):
    W1, W2, W3, w4 = layers
    return w4 @ (W3 @ torch.tanh(W2 @ (W1 @ x)))


def right_order(layers):
    W1, W2, W3, w4 = layers
    U1 = torch.cat([W1.T, W2], dim=0)
    U2 = torch.cat([W3.T, w4[None, :]], dim=0)
    return [U1 @ U1.T, U2 @ U2.T]


def test_ch9_checks_registered():
    assert {"ch9.layerwise_nqf", "ch9.order_parameters"} <= set(CHECKS)


def test_ch9_layerwise_nqf():
    assert_feedback(
        "ch9.layerwise_nqf",
        right_layerwise,
        {
            "leading order": lambda L, x: L[3] @ L[2] @ L[1] @ L[0] @ x,
            "network itself": lambda L, x: (
                L[3] @ torch.tanh(L[2] @ torch.tanh(L[1] @ torch.tanh(L[0] @ x)))
            ),
            "output": lambda L, x: torch.tanh(right_layerwise(L, x)),
            "is not the layer-wise NQF": lambda L, x: right_layerwise(L, x) + 1.0,
            "should be a number": lambda L, x: L[0] @ L[3],
            "raised": lambda L, x: L[0] @ L[1],
        },
    )
    assert "expected a function" in exercise("ch9.layerwise_nqf", 1, quiet=True).message


def test_ch9_order_parameters():
    def gram(layers):
        return [
            torch.cat([layers[0].T, layers[1]]).T @ torch.cat([layers[0].T, layers[1]]),
            torch.cat([layers[2].T, layers[3][None]]).T @ torch.cat([layers[2].T, layers[3][None]]),
        ]

    def swapped(layers):
        V1 = torch.cat([layers[1], layers[0].T])
        return [V1 @ V1.T, right_order(layers)[1]]

    assert_feedback(
        "ch9.order_parameters",
        right_order,
        {
            "Gram matrices": gram,
            "output weights w4": lambda L: [right_order(L)[0], L[2].T @ L[2]],
            "[column of W2; row of W1]": swapped,
            "sums over each module's units": lambda L: [2 * M for M in right_order(L)],
            "list [M1, M2]": lambda L: right_order(L)[0],
        },
    )
