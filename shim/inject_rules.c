/* fault-injection rule grammar: filled in with the injection work */
#include "inject_rules.h"
