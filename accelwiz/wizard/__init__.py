"""`accelwiz init`: the question flow as data (catalog, predicates), one loop that walks it (flow), and the
pure steps after it: answers -> config dicts (build) -> text (render) -> checked, atomic files (write)."""
