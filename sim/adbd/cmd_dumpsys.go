package adbd

import (
	"context"
	"fmt"
	"strings"
)

func init() {
	commands["dumpsys"] = cmdDumpsys
}

// component returns "pkg/.Act" for the foreground app, with the full class
// when the activity is outside the package.
func component(pkg, activity string) string {
	if activity == "" {
		activity = ".MainActivity"
	}
	if strings.HasPrefix(activity, pkg+".") {
		activity = strings.TrimPrefix(activity, pkg)
	}
	return pkg + "/" + activity
}

func cmdDumpsys(_ context.Context, c *Cmd) int {
	if len(c.Args) < 2 {
		c.printf("Currently running services:\n  activity\n  input\n  input_method\n  package\n  power\n  SurfaceFlinger\n  window\n  display\n  battery\n")
		return 0
	}
	ph := c.phone()
	pw, ph0, d := ph.Display() // physical, portrait
	rot := ph.Rotation()
	w, h := pw, ph0 // as laid out now
	orient := "port"
	if rot%2 == 1 {
		w, h, orient = ph0, pw, "land"
	}
	pkg, act := ph.Foreground()
	comp := component(pkg, act)
	sub := ""
	if len(c.Args) > 2 {
		sub = c.Args[2]
	}
	switch c.Args[1] {
	case "window":
		switch sub {
		case "displays":
			c.printf("WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n  Display: mDisplayId=0 rootTasks=1\n")
			c.printf("    init=%dx%d %ddpi cur=%dx%d app=%dx%d\n", pw, ph0, d, w, h, w, h)
			c.printf("    mLayoutSeq=1\n    mCurrentFocus=Window{1a2b3c u0 %s}\n    mFocusedApp=ActivityRecord{4d5e6f u0 %s t7}\n", comp, comp)
		default:
			c.printf("WINDOW MANAGER WINDOWS (dumpsys window windows)\n")
			c.printf("  Window #0 Window{1a2b3c u0 %s}:\n    mDisplayId=0 rootTaskId=7 mSession=Session{7f u0a100} mClient=android.os.BinderProxy@1\n", comp)
			c.printf("    mOwnerUid=10100 showForAllUsers=false package=%s appop=NONE\n", pkg)
			c.printf("    mHasSurface=true isReadyForDisplay()=true mWindowRemovalAllowed=false\n")
			if ph.KeyboardShown() {
				c.printf("  Window #1 Window{2b3c4d u0 InputMethod}:\n    mDisplayId=0 mHasSurface=true isReadyForDisplay()=true\n")
			}
			c.printf("\n  mGlobalConfiguration={1.0 ?mcc?mnc [en_US] ldltr sw%ddp w%ddp h%ddp %ddpi nrml %s finger qwerty/v/v -nav/h winConfig={ mBounds=Rect(0, 0 - %d, %d)} s.1}\n",
				min(w, h)*160/d, w*160/d, h*160/d, d, orient, w, h)
			c.printf("  mCurrentFocus=Window{1a2b3c u0 %s}\n  mFocusedApp=ActivityRecord{4d5e6f u0 %s t7}\n", comp, comp)
			c.printf("  mInputMethodWindow=Window{2b3c4d u0 InputMethod}\n")
			c.printf("  mShowingLockscreen=%v mShowingDream=false mDreamingLockscreen=%v\n", ph.Locked(), ph.Locked())
			c.printf("  isStatusBarKeyguard=%v\n  mScreenOn=%v mAwake=%v\n", ph.Locked(), ph.Awake(), ph.Awake())
		}
	case "activity":
		c.printf("ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to bottom):\n")
		c.printf("  * Task{7 #7 type=standard A=10100:%s U=0 visible=true mode=fullscreen}\n", pkg)
		c.printf("    * ActivityRecord{4d5e6f u0 %s t7}\n", comp)
		c.printf("\n  mResumedActivity: ActivityRecord{4d5e6f u0 %s t7}\n  topResumedActivity=ActivityRecord{4d5e6f u0 %s t7}\n", comp, comp)
		c.printf("  mFocusedApp=ActivityRecord{4d5e6f u0 %s t7}\n", comp)
	case "input":
		c.printf("INPUT MANAGER (dumpsys input)\n\nInput Manager State:\n  Interactive: %v\n\nInput Reader State:\n", ph.Awake())
		c.printf("  Device 1: virtio_input_multi_touch\n    Sources: 0x00001002\n    Touch Input Mapper (mode DIRECT):\n")
		c.printf("      Viewport INTERNAL: displayId=0, uniqueId=local:"+physicalDisplayID+", orientation=%d, logicalFrame=[0, 0, %d, %d], physicalFrame=[0, 0, %d, %d], deviceSize=[%d, %d], isActive=[1]\n", rot, w, h, w, h, pw, ph0)
		c.printf("      SurfaceWidth: %dpx\n      SurfaceHeight: %dpx\n      SurfaceOrientation: %d\n", w, h, rot)
		c.printf("\nInput Dispatcher State:\n  FocusedApplications:\n    displayId=0, name='ActivityRecord{4d5e6f u0 %s t7}'\n", comp)
		c.printf("  FocusedWindows:\n    displayId=0, name='1a2b3c %s'\n", comp)
	case "input_method":
		shown := ph.KeyboardShown()
		ime, _ := ph.Setting("secure", "default_input_method")
		c.printf("Current Input Method Manager state:\n  mCurMethodId=%s\n", ime)
		c.printf("  mCurFocusedWindowSoftInputMode=STATE_UNSPECIFIED|ADJUST_RESIZE\n  mInputShown=%v\n  mShowRequested=%v mShowExplicitlyRequested=false\n", shown, shown)
		c.printf("  mIsInputViewShown=%v\n  mImeWindowVis=%d\n", shown, map[bool]int{false: 0, true: 3}[shown])
	case "SurfaceFlinger":
		if sub == "--display-id" {
			c.printf("Display " + physicalDisplayID + " (HWC display 0): port=0 pnpId=GGL displayName=\"EMU_display_0\"\n")
			return 0
		}
		c.printf("Display " + physicalDisplayID + " (HWC display 0): port=0 pnpId=GGL displayName=\"EMU_display_0\"\n")
		c.printf("Display 0: %dx%d, density %d\n", w, h, d)
	case "display":
		c.printf("DISPLAY MANAGER (dumpsys display)\n  mViewports=[DisplayViewport{type=INTERNAL, valid=true, isActive=true, displayId=0, uniqueId='local:"+physicalDisplayID+"', physicalPort=0, orientation=%d, logicalFrame=Rect(0, 0 - %d, %d), physicalFrame=Rect(0, 0 - %d, %d), deviceWidth=%d, deviceHeight=%d}]\n", rot, w, h, w, h, w, h)
		c.printf("Display Devices: size=1\n  DisplayDeviceInfo{\"Built-in Screen\": uniqueId=\"local:"+physicalDisplayID+"\", %d x %d, density %d}\n", w, h, d)
		c.printf("  Display Id=0\n  Display State=%s\n", map[bool]string{true: "ON", false: "OFF"}[ph.Awake()])
	case "power":
		wake := "Asleep"
		state := "OFF"
		if ph.Awake() {
			wake, state = "Awake", "ON"
		}
		c.printf("POWER MANAGER (dumpsys power)\n  mWakefulness=%s\n  mWakefulnessChanging=false\n  mIsPowered=true\n  mHoldingDisplaySuspendBlocker=%v\n  Display Power: state=%s\n", wake, ph.Awake(), state)
	case "battery":
		dumpBattery(c)
	case "location":
		dumpLocation(c)
	case "package":
		return dumpPackage(c, sub)
	default:
		fmt.Fprintf(c.Stderr, "Can't find service: %s\n", c.Args[1])
		return 1
	}
	return 0
}

func dumpPackage(c *Cmd, name string) int {
	for _, p := range c.s.packages() {
		if name != "" && p.Name != name {
			continue
		}
		c.printf("Packages:\n  Package [%s] (%x):\n    userId=10100\n    pkg=Package{%x %s}\n", p.Name, pid(p.Name), pid(p.Name), p.Name)
		c.printf("    codePath=%s\n    versionCode=1 minSdk=24 targetSdk=33\n    versionName=%s\n", apkDir(p.Name), p.Version)
		flags := "[ HAS_CODE ALLOW_CLEAR_USER_DATA ]"
		if p.Debuggable {
			flags = "[ DEBUGGABLE HAS_CODE ALLOW_CLEAR_USER_DATA ]"
		}
		c.printf("    flags=%s\n", flags)
	}
	return 0
}
