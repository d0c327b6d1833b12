% Lazy evaluation of gteq/2 over bags of values (xcore's test problem; see README.md)
:- modeh(1,p(+ex)).
:- modeb(1,col(+ex,#colour)).
:- modeb(*,val(+ex,-number)).
:- modeb(1,gteq(+number,#number)).
:- lazy_evaluate(gteq/2).
:- determination(p/1,col/2).
:- determination(p/1,val/2).
:- determination(p/1,gteq/2).

gteq([P,N],V) :- !, threshold(P,N,V).
gteq(X,V) :- number(X), number(V), !, X >= V.
gteq(X,X).
threshold(P,[],V) :- !, min_list(P,V).
threshold(P,N,V) :- max_list(N,M), include(<(M),P,A), ( A = [] -> max_list(P,V) ; min_list(A,V) ).
val(e1,3). val(e1,12).
val(e2,9). val(e2,3).
val(e3,20).
val(e4,3). val(e4,5).
val(e5,7). val(e5,5).
val(e6,1).
col(e1,red). col(e2,blue). col(e3,red). col(e4,red). col(e5,blue). col(e6,red).
