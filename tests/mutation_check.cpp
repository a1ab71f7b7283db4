// placeholder replaced below
int main() { return 77; }
