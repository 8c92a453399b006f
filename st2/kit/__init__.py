"""The delegation kit's second half (docs/kit.md): the commit-shape gate over gate tampering, the
tier-explicit gate and its generator, the model verdict, the foreign-vendor run with its keyed
verdict, the wait probe, the templates and their installer, and the status-line arm renderer.

Each arm is an ``st2`` verb; the README's "Delegation kit" section maps arm to verb."""
