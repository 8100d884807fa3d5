// Calls up the module graph: upper_function is defined in upper/, which depends on lower/.
int upper_function();
int lower_function() { return upper_function() + 1; }
