"""Programs that mutate their inputs (torch.export's USER_INPUT_MUTATION):
in-place ops, copy_, fill_, index_put_ and slice assignment on an argument.
Kiln returns the new values and the client writes them into the caller's
tensors, as eager does; the runner compares the inputs after the call too."""

import torch

from tests.registry.registry import randint, randn, register


def _add_(x, y):
    x.add_(y)
    return x * 2


def _relu_in_place_only(x):
    torch.relu_(x)
    return x.sum(0)


def _copy_(dst, src):
    dst.copy_(src * 3)
    return dst + 1


def _fill_(x):
    x.fill_(2.5)
    return x


def _index_put_(x, i, v):
    x.index_put_((i,), v)
    return x.mean()


def _index_put_accumulate(x, i, v):
    x.index_put_((i,), v, accumulate=True)
    return x


def _slice_assign(x, y):
    x[:, 1:3] = y
    return x.amax(1)


def _two_mutated(a, b):
    a.mul_(2)
    b.sub_(a)
    return a + b


def _mutate_second_only(a, b):
    b.clamp_(min=0)
    return a * b


def _int_in_place(x):
    x.add_(3)
    x.mul_(x)
    return x.sum()


register("mutate_add_f32", _add_, randn(3, 4), randn(3, 4))
register("mutate_relu_f32", _relu_in_place_only, randn(5, 3))
register("mutate_copy_f32", _copy_, randn(2, 6), randn(2, 6))
register("mutate_copy_broadcast_f64", _copy_, randn(3, 4, dtype=torch.float64),
         randn(4, dtype=torch.float64))
register("mutate_fill_f32", _fill_, randn(4, 2))
register("mutate_index_put_f32", _index_put_, randn(6, 3), randint(0, 6, 2), randn(2, 3))
register("mutate_index_put_accumulate_f32", _index_put_accumulate, randn(5, 2),
         randint(0, 5, 7), randn(7, 2))
register("mutate_slice_assign_f32", _slice_assign, randn(3, 5), randn(3, 2))
register("mutate_two_inputs_f32", _two_mutated, randn(4, 4), randn(4, 4))
register("mutate_second_input_f32", _mutate_second_only, randn(3, 3), randn(3, 3))
register("mutate_in_place_i64", _int_in_place, randint(-5, 5, 3, 4))
