p(e1).
p(e2).
p(e3).
