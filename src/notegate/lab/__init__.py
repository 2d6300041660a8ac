"""`notegate lab`: the whole stack on one machine and an end-to-end run of its promises."""
