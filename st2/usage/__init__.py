"""The usage budget: the usage.txt snapshot contract, its poll producer, the verdict that gates
delegation on it, the sample history and the trend reporter over that history.

Everything here is standard library only: `st2 usage verdict`, `st2 usage poll` and
`st2 hook budget-guard` are hot paths and import these modules before click ever loads.
"""
