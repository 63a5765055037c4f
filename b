19290 67 6 sigsuspend.isra.0
19292 32 0 do_epoll_wait
19295 17 0 futex_do_wait
19316 1 0 futex_do_wait
19317 1 0 futex_do_wait
