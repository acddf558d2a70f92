// SPDX-License-Identifier: GPL-2.0-only
/*
 * cxx_leak.cpp - a C++ leak through new inside containers: every
 * STK_PERIOD_S, main -> cxx_run -> cxx_leak_site, which news a
 * std::string of STK_LEAK_SIZE characters and pushes the pointer into a
 * std::vector it never clears, and inserts a small record into a
 * std::map. The allocations happen in operator new, in libstdc++'s
 * string and in the containers' std:: internals; the call site memtop
 * must report is cxx_leak_site. Protocol: stacks_common.h.
 */
#include <map>
#include <string>
#include <vector>

#include "stacks_common.h"

volatile unsigned long stk_after_call;

struct record {
	unsigned long seq;
	char tag[40];
};

STK_FN void cxx_leak_site(std::vector<std::string *> &keep, std::map<unsigned long, record> &index,
			  unsigned long seq)
{
	keep.push_back(new std::string(STK_LEAK_SIZE, (char)('a' + seq % 26)));
	index[seq].seq = seq;
	stk_after_call++;
}

STK_FN void cxx_run(std::vector<std::string *> &keep, std::map<unsigned long, record> &index,
		    unsigned long seq)
{
	cxx_leak_site(keep, index, seq);
	stk_after_call++;
}

int main(int argc, char **argv)
{
	double secs = stk_seconds(argc, argv), end;
	std::vector<std::string *> *keep = new std::vector<std::string *>;
	std::map<unsigned long, record> *index = new std::map<unsigned long, record>;

	stk_ready_and_wait();
	end = stk_now() + secs;
	for (unsigned long seq = 0; stk_now() < end; seq++) {
		cxx_run(*keep, *index, seq);
		stk_sleep(STK_PERIOD_S);
	}
	stk_done();
	return 0;
}
