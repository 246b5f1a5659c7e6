"""`accelwiz init`: the question flow as data (catalog, predicates), one loop that walks it with back and re-ask
(flow), the memory plan behind its defaults and fallbacks (plan, one-way below suggest), and the pure steps after
it: answers -> config dicts (build) -> text and the plan file (render, generate) -> checked, atomic files (write)."""
