"""Rematerialization, as `jax.ad_checkpoint`: `checkpoint` (`remat`), its policies, and
`checkpoint_name` to name values for them."""

from ember._src.custom import checkpoint, checkpoint_name, checkpoint_policies, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
