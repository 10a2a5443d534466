B=fix/integral
B=$B-windup
git show $B:thermoprobe/pid.py | grep -n _integral
