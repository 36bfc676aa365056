#ifndef CT_INJECT_RULES_H
#define CT_INJECT_RULES_H
#endif
