int lower_function();
int upper_function() { return 41; }
int upper_uses_lower() { return lower_function(); }
