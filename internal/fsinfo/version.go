package fsinfo

// kernelVersion reads the major and minor numbers off a kernel release,
// as uname(2) gives it ("6.18.44-fc-v595"); zeros if it has none.
func kernelVersion(release string) (major, minor int) {
	nums := [2]int{}
	i := 0
	for _, c := range release {
		switch {
		case c >= '0' && c <= '9':
			nums[i] = nums[i]*10 + int(c-'0')
		case c == '.' && i == 0:
			i++
		default:
			return nums[0], nums[1]
		}
	}
	return nums[0], nums[1]
}
